package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sqpredict/sqpredict/features"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/training"
)

func init() {
	register(command{name: "registry", summary: "list and show bundles; promote, roll back and set the challenger", run: runRegistry})
}

const registryUsage = `VERB --registry DIR [--repo NAME] [VERSION]

verbs:
  list                     every version, oldest first, with its role and a few metrics
  show [VERSION]           one version's manifest (default: the champion)
  promote VERSION          make VERSION the champion (it must load with this binary's models)
  rollback                 make the newest version older than the champion, that loads, the champion
  set-challenger VERSION   make VERSION the challenger (it must load)
  clear-challenger         remove the challenger pointer

Pointers are replaced atomically; never edit pointer files by hand. A running predictd
following the registry picks the change up at its next poll.`

// registryVerbs are the verbs of "trainer registry" and whether each takes a version.
var registryVerbs = map[string]bool{
	"list": false, "show": true, "promote": true, "rollback": false,
	"set-challenger": true, "clear-challenger": false,
}

func runRegistry(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// The usage with the flags every verb takes.
		fs := newFlagSet(e, "registry", registryUsage)
		fs.String("registry", "", "registry folder (required)")
		fs.String("repo", "", "repository name (default: the registry's only one, as predictd)")
		fs.Usage()
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return nil
		}
		return fmt.Errorf("%w: a verb is required (list, show, promote, rollback, set-challenger, clear-challenger)", errUsage)
	}
	verb := args[0]
	takesVersion, ok := registryVerbs[verb]
	if !ok {
		return fmt.Errorf("%w: unknown verb %q (want list, show, promote, rollback, set-challenger or clear-challenger)", errUsage, verb)
	}
	fs := newFlagSet(e, "registry "+verb, registryUsage)
	dir := fs.String("registry", "", "registry folder (required)")
	repo := fs.String("repo", "", "repository name (default: the registry's only one, as predictd)")
	// Flags may come before or after the version.
	rest := args[1:]
	var version string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		version, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if version == "" && fs.NArg() > 0 {
		version = fs.Arg(0)
		if fs.NArg() > 1 {
			return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(1))
		}
	} else if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	var missing []string
	if *dir == "" {
		missing = append(missing, "--registry")
	}
	if version == "" && takesVersion && verb != "show" {
		missing = append(missing, "VERSION")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s %s required", errUsage, strings.Join(missing, " and "), plural(len(missing), "is", "are"))
	}
	if version != "" && !takesVersion {
		return fmt.Errorf("%w: %s takes no version (got %q)", errUsage, verb, version)
	}
	reg, err := registry.Open(*dir)
	if err != nil {
		return err
	}
	if *repo == "" {
		if *repo, err = onlyRepo(reg, *dir); err != nil {
			return err
		}
	}
	switch verb {
	case "list":
		return registryList(e.stdout, reg, *repo)
	case "show":
		return registryShow(e.stdout, reg, *repo, version)
	case "promote":
		if err := checkLoads(reg, *repo, version); err != nil {
			return err
		}
		if err := reg.SetChampion(*repo, version); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "champion of %s is now %s\n", *repo, version)
	case "rollback":
		v, err := rollbackTarget(reg, *repo)
		if err != nil {
			return err
		}
		if err := reg.SetChampion(*repo, v); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "champion of %s rolled back to %s\n", *repo, v)
	case "set-challenger":
		if err := checkLoads(reg, *repo, version); err != nil {
			return err
		}
		if err := reg.SetChallenger(*repo, version); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "challenger of %s is now %s\n", *repo, version)
	case "clear-challenger":
		if err := reg.ClearChallenger(*repo); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "challenger of %s cleared\n", *repo)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkLoads verifies that version of repo loads as predictd would load it (with the
// author key of $SQPREDICT_AUTHOR_KEY_FILE, if any): checksums,
// this binary's feature schema, and every model file.
func checkLoads(reg *registry.Registry, repo, version string) error {
	b, err := reg.Load(repo, version, training.SchemaHash())
	if err != nil {
		return fmt.Errorf("version %s does not load: %w", version, err)
	}
	// A bundle with pseudonymised authors loads with the operator's key, which
	// predictd reads from the same environment default.
	key, err := features.AuthorKeyFromFlag("")
	if err != nil {
		return fmt.Errorf("$%s: %w", features.AuthorKeyEnv, err)
	}
	if _, err := training.Load(b, training.LoadOptions{AuthorKey: key}); err != nil {
		return fmt.Errorf("version %s does not load: %w", version, err)
	}
	return nil
}

// rollbackTarget returns the newest version of repo older than its champion that
// loads with this binary.
func rollbackTarget(reg *registry.Registry, repo string) (string, error) {
	champ, err := reg.Champion(repo)
	if err != nil {
		return "", err
	}
	versions, err := reg.List(repo)
	if err != nil {
		return "", err
	}
	at := slices.Index(versions, champ)
	if at < 0 {
		return "", fmt.Errorf("champion %s of %s is not among its versions", champ, repo)
	}
	var reasons []string
	for i := at - 1; i >= 0; i-- {
		err := checkLoads(reg, repo, versions[i])
		if err == nil {
			return versions[i], nil
		}
		reasons = append(reasons, err.Error())
	}
	if len(reasons) == 0 {
		return "", fmt.Errorf("no version of %s is older than its champion %s", repo, champ)
	}
	return "", fmt.Errorf("no older version of %s loads: %s", repo, strings.Join(reasons, "; "))
}

// roles returns the role names of version v given the champion and challenger.
func roles(v, champ, chall string) string {
	var r []string
	if v == champ {
		r = append(r, "champion")
	}
	if v == chall {
		r = append(r, "challenger")
	}
	if len(r) == 0 {
		return "-"
	}
	return strings.Join(r, ",")
}

// listedMetrics are the manifest metrics "registry list" prints, when present.
var listedMetrics = []string{"success.log_loss", "success.auc", "conflict.log_loss", "buildtime.nll"}

func registryList(w io.Writer, reg *registry.Registry, repo string) error {
	versions, err := reg.List(repo)
	if err != nil {
		return err
	}
	champ, _ := reg.Champion(repo)
	chall, _ := reg.Challenger(repo)
	fmt.Fprintf(w, "%-24s  %-20s  %-20s  %-25s", "version", "role", "trained_at", "window")
	for _, m := range listedMetrics {
		fmt.Fprintf(w, "  %17s", m)
	}
	fmt.Fprintln(w)
	for _, v := range versions {
		m, err := reg.Manifest(repo, v)
		if err != nil {
			fmt.Fprintf(w, "%-24s  %-20s  unreadable manifest: %v\n", v, roles(v, champ, chall), err)
			continue
		}
		win := m.Window.From.Format("2006-01-02") + ".." + m.Window.To.Format("2006-01-02")
		fmt.Fprintf(w, "%-24s  %-20s  %-20s  %-25s", v, roles(v, champ, chall), m.TrainedAt.Format("2006-01-02T15:04:05Z"), win)
		for _, name := range listedMetrics {
			if x, ok := m.Metrics[name]; ok {
				fmt.Fprintf(w, "  %17.4f", x)
			} else {
				fmt.Fprintf(w, "  %17s", "-")
			}
		}
		fmt.Fprintln(w)
	}
	if len(versions) == 0 {
		fmt.Fprintf(w, "(no versions of %s)\n", repo)
	}
	return nil
}

func registryShow(w io.Writer, reg *registry.Registry, repo, version string) error {
	if version == "" {
		v, err := reg.Champion(repo)
		if err != nil {
			return err
		}
		version = v
	}
	m, err := reg.Manifest(repo, version)
	if err != nil {
		return err
	}
	champ, _ := reg.Champion(repo)
	chall, _ := reg.Challenger(repo)
	out := struct {
		Role     string             `json:"role"`
		Loads    string             `json:"loads"`
		Manifest *registry.Manifest `json:"manifest"`
	}{Role: roles(version, champ, chall), Loads: "yes", Manifest: m}
	if err := checkLoads(reg, repo, version); err != nil {
		out.Loads = err.Error()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// onlyRepo returns the only repository of reg, the default of --repo as in predictd; an
// empty registry or one of several repositories is an error naming the fix.
func onlyRepo(reg *registry.Registry, dir string) (string, error) {
	repos, err := reg.Repos()
	if err != nil {
		return "", err
	}
	switch len(repos) {
	case 0:
		return "", fmt.Errorf("registry %s holds no repository yet: publish a bundle with trainer train --registry %s", dir, dir)
	case 1:
		return repos[0], nil
	}
	return "", fmt.Errorf("%w: registry %s holds repositories %s: choose one with --repo", errUsage, dir, strings.Join(repos, ", "))
}
