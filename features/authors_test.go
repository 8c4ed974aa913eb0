package features

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sqpredict/sqpredict/datasets/synth"
)

// TestPseudonymRFC4231 checks Pseudonym against the HMAC-SHA256 test vectors of
// RFC 4231 §4.2 (test case 1) and §4.3 (test case 2).
func TestPseudonymRFC4231(t *testing.T) {
	for _, tc := range []struct {
		key  []byte
		data string
		want string
	}{
		{bytes.Repeat([]byte{0x0b}, 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		{[]byte("Jefe"), "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
	} {
		k, err := NewAuthorKey(tc.key)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Pseudonym(tc.data); got != tc.want {
			t.Errorf("Pseudonym(%q) under %s = %s, want %s", tc.data, hex.EncodeToString(tc.key), got, tc.want)
		}
	}
	k, _ := NewAuthorKey([]byte("Jefe"))
	if k.Pseudonym("") != "" {
		t.Error("the unknown author got a pseudonym")
	}
}

// TestReadAuthorKeyFile reads keys from files: one trailing newline is not part of the
// key, a short key or a missing file is refused naming the file, and the flag value
// falls back to AuthorKeyEnv.
func TestReadAuthorKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := strings.Repeat("ab", 16)
	want, _ := NewAuthorKey([]byte(secret))
	for _, body := range []string{secret, secret + "\n", secret + "\r\n"} {
		k, err := ReadAuthorKeyFile(write("k", body))
		if err != nil || k.ID() != want.ID() || k.Pseudonym("alice") != want.Pseudonym("alice") {
			t.Errorf("ReadAuthorKeyFile(%q) = %v, %v; want the key %s", body, k, err, want.ID())
		}
	}
	short := write("short", "0123456789\n")
	if _, err := ReadAuthorKeyFile(short); !errors.Is(err, ErrAuthorKey) || !strings.Contains(err.Error(), short) {
		t.Errorf("short key: %v", err)
	}
	if _, err := ReadAuthorKeyFile(filepath.Join(dir, "missing")); !errors.Is(err, ErrAuthorKey) {
		t.Errorf("missing file: %v", err)
	}
	t.Setenv(AuthorKeyEnv, "")
	if k, err := AuthorKeyFromFlag(""); k != nil || err != nil {
		t.Errorf("no flag, no environment: %v, %v", k, err)
	}
	t.Setenv(AuthorKeyEnv, write("env", secret))
	if k, err := AuthorKeyFromFlag(""); err != nil || k.ID() != want.ID() {
		t.Errorf("environment key: %v, %v", k, err)
	}
	other, _ := NewAuthorKey([]byte(strings.Repeat("cd", 16)))
	if k, err := AuthorKeyFromFlag(write("flag", strings.Repeat("cd", 16))); err != nil || k.ID() != other.ID() {
		t.Errorf("the flag does not override the environment: %v, %v", k, err)
	}
}

// TestPseudonymisedDevTable pseudonymises a synthetic developer table: every author
// (and the unknown one, and one never seen) gets the same statistics and recency
// features through the keyed table as through the table in clear; the file holds no
// real name, only the key id; read back, it refuses to score without the key or with
// another one, naming the key id, and scores identically with it.
func TestPseudonymisedDevTable(t *testing.T) {
	h, err := synth.Generate(context.Background(), synth.Config{Profile: "go", Days: 2, Seed: 3, ChangesPerHour: 6})
	if err != nil {
		t.Fatal(err)
	}
	asOf := h.Changes[len(h.Changes)/2].SubmittedAt
	clear, err := NewDevTable(context.Background(), h, asOf)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := NewAuthorKey([]byte("an operator key of 32 bytes ....."))
	pt, err := clear.Pseudonymise(key)
	if err != nil {
		t.Fatal(err)
	}
	if pt.AuthorKeyID() != key.ID() || clear.AuthorKeyID() != "" || pt.NAuthors() != clear.NAuthors() {
		t.Fatalf("key ids %q, %q; authors %d, %d", pt.AuthorKeyID(), clear.AuthorKeyID(), pt.NAuthors(), clear.NAuthors())
	}
	if _, err := pt.Pseudonymise(key); !errors.Is(err, ErrAuthorKey) {
		t.Errorf("pseudonymising twice: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteDevTable(&buf, pt); err != nil {
		t.Fatal(err)
	}
	authors := map[string]bool{}
	for i := range h.Changes {
		authors[h.Changes[i].Author] = true
	}
	for a := range authors {
		if a != "" && bytes.Contains(buf.Bytes(), []byte(`"`+a+`"`)) {
			t.Fatalf("the pseudonymised file names author %q", a)
		}
	}
	if !bytes.Contains(buf.Bytes(), []byte(key.ID())) {
		t.Error("the file lacks the key id")
	}
	read, err := ReadDevTable(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := read.WithAuthorKey(nil); !errors.Is(err, ErrAuthorKey) || !strings.Contains(err.Error(), key.ID()) {
		t.Errorf("without the key: %v, want ErrAuthorKey naming %s", err, key.ID())
	}
	other, _ := NewAuthorKey([]byte("another operator key of 32 bytes."))
	if _, err := read.WithAuthorKey(other); !errors.Is(err, ErrAuthorKey) || !strings.Contains(err.Error(), key.ID()) || !strings.Contains(err.Error(), other.ID()) {
		t.Errorf("with another key: %v, want ErrAuthorKey naming both ids", err)
	}
	if c, err := clear.WithAuthorKey(nil); err != nil || c != clear {
		t.Errorf("a table in clear needs no key: %v", err)
	}
	keyed, err := read.WithAuthorKey(key)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	n := 0
	for i := range h.Changes {
		c := h.Changes[i]
		for _, tb := range []*DevTable{pt, keyed} {
			want, got := clear.Lookup(c.Author), tb.Lookup(c.Author)
			if !same(got.PriorChanges, want.PriorChanges) || !same(got.SuccessRate, want.SuccessRate) ||
				!same(got.ConflictRate, want.ConflictRate) || !same(got.MeanLogDuration, want.MeanLogDuration) {
				t.Fatalf("author %q: keyed %+v, clear %+v", c.Author, got, want)
			}
			wr, gr := clear.Recent(c.Repo, &c), tb.Recent(c.Repo, &c)
			if !same(gr.AuthorFailRate, wr.AuthorFailRate) || !same(gr.AuthorLastFailed, wr.AuthorLastFailed) {
				t.Fatalf("author %q: keyed recency %+v, clear %+v", c.Author, gr, wr)
			}
		}
		if clear.Lookup(c.Author).PriorChanges > 0 {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no author with prior changes: the comparison checked nothing")
	}
	for _, a := range []string{"", "nobody-ever"} {
		if got, want := keyed.Lookup(a), clear.Lookup(a); !same(got.PriorChanges, want.PriorChanges) || got.SuccessRate != want.SuccessRate {
			t.Errorf("author %q: keyed %+v, clear %+v", a, got, want)
		}
	}
}
