package features

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"

	"github.com/sqpredict/sqpredict/datasets"
)

// ErrAuthorKey is a developer table pseudonymised under an author key that was not
// given, or given another key, or a key file that cannot be used.
var ErrAuthorKey = errors.New("author key")

// AuthorKeyEnv is the environment variable naming the author key file: the default of
// the --author-key-file flag of every command that writes or reads bundles.
const AuthorKeyEnv = "SQPREDICT_AUTHOR_KEY_FILE"

// MinAuthorKeyBytes is the shortest key ReadAuthorKeyFile accepts: 128 bits, the
// security HMAC-SHA256 needs against guessing the key (RFC 2104 §3 recommends at least
// the hash output length; 32 random bytes, e.g. `head -c 32 /dev/urandom`, give it).
const MinAuthorKeyBytes = 16

// AuthorKey is the operator's secret key that pseudonymises author names in a bundle's
// developer table (issue 14 item 8): a name is replaced by its HMAC-SHA256 under the key
// (Pseudonym), so the table holds no real names, and a scorer with the same key hashes
// the incoming author the same way before looking it up. Only ID, a hash of the key, is
// recorded in the bundle. An AuthorKey is immutable and safe for concurrent use.
type AuthorKey struct {
	secret []byte
	id     string
}

// NewAuthorKey returns the key with secret bytes secret (copied); an empty secret is an
// error wrapping ErrAuthorKey.
func NewAuthorKey(secret []byte) (*AuthorKey, error) {
	if len(secret) == 0 {
		return nil, fmt.Errorf("%w: empty key", ErrAuthorKey)
	}
	s := bytes.Clone(secret)
	// The id hashes the key with a fixed prefix, so it is neither the pseudonym of any
	// name nor an HMAC output: publishing it reveals nothing usable about the key.
	h := sha256.Sum256(append([]byte("sqpredict author key id\x00"), s...))
	return &AuthorKey{secret: s, id: hex.EncodeToString(h[:8])}, nil
}

// ReadAuthorKeyFile reads the key in the file at path: its bytes, without one trailing
// newline ("\n" or "\r\n"), so that a key written by `openssl rand -hex 32 > F` is the
// 64 hex characters. A key shorter than MinAuthorKeyBytes is refused. Errors wrap
// ErrAuthorKey and name the file. It is the one reader of key files that the trainer and
// predictd share.
func ReadAuthorKeyFile(path string) (*AuthorKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAuthorKey, err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) < MinAuthorKeyBytes {
		return nil, fmt.Errorf("%w: %s holds %d bytes, want at least %d (e.g. head -c 32 /dev/urandom > %s)",
			ErrAuthorKey, path, len(b), MinAuthorKeyBytes, path)
	}
	return NewAuthorKey(b)
}

// AuthorKeyFromFlag returns the key of the file named by a --author-key-file flag
// value, or by the AuthorKeyEnv environment variable when the flag is empty; nil when
// neither names a file (authors in clear).
func AuthorKeyFromFlag(path string) (*AuthorKey, error) {
	if path == "" {
		path = os.Getenv(AuthorKeyEnv)
	}
	if path == "" {
		return nil, nil
	}
	return ReadAuthorKeyFile(path)
}

// ID returns the public id of the key: the first 8 bytes, in hex, of the SHA-256 of a
// fixed prefix and the key. Bundles record it, so that a loader can say which key a
// table needs.
func (k *AuthorKey) ID() string { return k.id }

// Pseudonym returns the lowercase hex HMAC-SHA256 of author under the key; the empty
// name (author unknown) stays empty.
func (k *AuthorKey) Pseudonym(author string) string {
	if author == "" {
		return ""
	}
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte(author))
	return hex.EncodeToString(m.Sum(nil))
}

// AuthorKeyID returns the id of the key the table's authors are pseudonymised under, ""
// when they are in clear.
func (t *DevTable) AuthorKeyID() string { return t.keyID }

// Pseudonymise returns a copy of t whose authors, in the developer statistics and in
// the recency state, are named by their Pseudonym under k, and which hashes the authors
// it is asked about under k (Lookup, Recent). A table already pseudonymised is an error
// wrapping ErrAuthorKey.
func (t *DevTable) Pseudonymise(k *AuthorKey) (*DevTable, error) {
	if t.keyID != "" {
		return nil, fmt.Errorf("%w: the developer table is already pseudonymised (key id %s)", ErrAuthorKey, t.keyID)
	}
	c := *t
	c.authors = make(map[string]*devCounts, len(t.authors))
	for a, v := range t.authors {
		c.authors[k.Pseudonym(a)] = v
	}
	rec := *t.rec
	rec.Authors = make(map[string]*labelWindow, len(t.rec.Authors))
	for a, v := range t.rec.Authors {
		rec.Authors[k.Pseudonym(a)] = v
	}
	rec.Repos = maps.Clone(t.rec.Repos)
	c.rec = &rec
	c.keyID, c.key = k.ID(), k
	return &c, nil
}

// WithAuthorKey returns t ready to score with key k: a table in clear is returned as it
// is (whatever k); a pseudonymised one needs the key it was made with, and is returned
// as a copy that hashes the authors it is asked about. Without k, or with another key,
// it returns an error wrapping ErrAuthorKey that names the key id the table needs.
func (t *DevTable) WithAuthorKey(k *AuthorKey) (*DevTable, error) {
	switch {
	case t.keyID == "":
		return t, nil
	case k == nil:
		return nil, fmt.Errorf("%w: the developer table's authors are pseudonymised under author key id %s: "+
			"give that key with --author-key-file or %s", ErrAuthorKey, t.keyID, AuthorKeyEnv)
	case k.ID() != t.keyID:
		return nil, fmt.Errorf("%w: the developer table's authors are pseudonymised under author key id %s, "+
			"the key given has id %s", ErrAuthorKey, t.keyID, k.ID())
	}
	c := *t
	c.key = k
	return &c, nil
}

// keyed returns the name t's maps hold for author: its pseudonym when t has a key.
func (t *DevTable) keyed(author string) string {
	if t.key != nil {
		return t.key.Pseudonym(author)
	}
	return author
}

// keyedChange returns c, or a copy with its author pseudonymised when t has a key.
func (t *DevTable) keyedChange(c *datasets.Change) *datasets.Change {
	if t.key == nil || c.Author == "" {
		return c
	}
	cc := *c
	cc.Author = t.key.Pseudonym(c.Author)
	return &cc
}
