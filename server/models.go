package server

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqpredict/sqpredict/features"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/registry"
	"github.com/sqpredict/sqpredict/scoring"
)

// Model is a loaded, verified bundle: the scorer of its models and its manifest. It is
// read-only once built; a reload replaces the *Model, never changes it.
type Model struct {
	// Role is the pointer the bundle was loaded for.
	Role registry.Role
	// Version is the bundle's registry version.
	Version string
	// Manifest is the bundle's manifest.
	Manifest registry.Manifest
	// Scorer predicts with the bundle's models.
	Scorer *scoring.Scorer
	// BuildFamily is the family of the bundle's served build-time model: the shape the
	// speculation math gives the build times it predicts (Phi(Z) only for BuildNormal).
	BuildFamily scoring.BuildFamily
	// Served names the model serving each section ("success", "conflict",
	// "buildtime"), as GetModelInfo reports it; nil when unknown.
	Served map[string]string
	// LoadedAt is when the server loaded the bundle.
	LoadedAt time.Time
	// ref is the ModelRef of the model's predictions, made by the first Models.Set;
	// read-only once the model is served.
	ref *pb.ModelRef
}

// Models holds the champion and the challenger being served. Each is swapped
// atomically: a request reads both pointers once and keeps those models to the end, so a
// reload never changes the models of a request in flight. Safe for concurrent use.
type Models struct {
	champion, challenger atomic.Pointer[Model]
	// pointer is the version the champion pointer names while the champion served is
	// an older version loaded in its place (Reloader.StartChampion); nil otherwise.
	pointer atomic.Pointer[string]
}

// ChampionFallback returns the version the champion pointer names and true when the
// champion being served is an older version loaded in its place, because the pointer's
// version failed to load at start; "" and false otherwise.
func (m *Models) ChampionFallback() (pointer string, ok bool) {
	if p := m.pointer.Load(); p != nil {
		return *p, true
	}
	return "", false
}

// Champion returns the champion, or nil before the first load.
func (m *Models) Champion() *Model { return m.champion.Load() }

// Challenger returns the challenger, or nil when none is loaded.
func (m *Models) Challenger() *Model { return m.challenger.Load() }

// Set makes model the model of role; nil removes it.
func (m *Models) Set(role registry.Role, model *Model) {
	if model != nil && model.ref == nil {
		model.ref = modelRef(model) // before any request can read model
	}
	if role == registry.RoleChallenger {
		m.challenger.Store(model)
		return
	}
	m.champion.Store(model)
}

// get returns the model of role.
func (m *Models) get(role registry.Role) *Model {
	if role == registry.RoleChallenger {
		return m.Challenger()
	}
	return m.Champion()
}

// RouteChallenger reports whether the change id is served by the challenger when a share
// of changes in [0, 1] goes to it. The hash is 64-bit FNV-1a of the id's bytes followed
// by the 64-bit finaliser of MurmurHash3 (fmix64), which spreads FNV's last byte over the
// top bits; the change goes to the challenger when hash/2^64 < share. The same id is
// always routed the same way, in every process and version of predictd, so a change
// sees one model throughout its life in the queue.
func RouteChallenger(id string, share float64) bool {
	if share <= 0 {
		return false
	}
	if share >= 1 {
		return true
	}
	return float64(routeHash(id))/(1<<64) < share
}

// routeHash is FNV-1a 64 (offset basis 14695981039346656037, prime 1099511628211) of id,
// then fmix64.
func routeHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// LoadFunc loads and completely verifies version of the server's repository for role:
// checksums, feature schema, every model. It returns the model ready to serve.
type LoadFunc func(role registry.Role, version string) (*Model, error)

// Reloader loads bundles into Models, keeping the current model of a role when a new
// one fails to load, and records every attempt in Metrics and the log.
type Reloader struct {
	Models *Models
	Load   LoadFunc
	// Metrics records every load attempt; nil records nothing.
	Metrics *Metrics
	// Log receives loads and failures; nil means slog.Default().
	Log *slog.Logger
	// OnChampion, when not nil, is called after every successful champion load (the
	// server becomes ready).
	OnChampion func(m *Model)
	// ChallengerFollowsChampion makes the challenger the champion bundle's own
	// challenger models: after every successful champion load the challenger role
	// loads the same version (Load decides what that means, e.g.
	// bundleload.ChallengerLoader), and challenger pointer events are ignored.
	ChallengerFollowsChampion bool

	// mu protects failed, which holds, for the champion and the challenger, whether
	// the last load attempt failed.
	mu     sync.Mutex
	failed [2]bool
}

// setFailed records the result of a load attempt for role and returns whether the
// previous one failed.
func (r *Reloader) setFailed(role registry.Role, failed bool) (was bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := 0
	if role == registry.RoleChallenger {
		i = 1
	}
	was, r.failed[i] = r.failed[i], failed
	return was
}

// Reload loads version for role and swaps it in. On failure the model being served is
// kept and the error is returned (and logged). Either way the result goes to the metrics
// in a deferred call that looks at the returned error.
func (r *Reloader) Reload(role registry.Role, version string) (err error) {
	start := time.Now()
	defer func() {
		end := time.Now()
		r.Metrics.reloaded(role, err, start, end)
		r.setFailed(role, err != nil)
		if err != nil {
			r.logLoadFailed(role, version, err)
		}
	}()
	m, err := r.Load(role, version)
	if err != nil {
		return fmt.Errorf("server: loading %s %s: %w", role, version, err)
	}
	m.Role, m.Version = role, version
	if m.LoadedAt.IsZero() {
		m.LoadedAt = time.Now()
	}
	r.set(role, m)
	if role == registry.RoleChampion {
		r.clearFallback()
	}
	r.log().Info("loaded bundle", "role", role.String(), "version", version, "build_time_family", m.BuildFamily.String(),
		"served", fmt.Sprint(m.Served), "trained_at", m.Manifest.TrainedAt, "seconds", time.Since(start).Seconds())
	if role == registry.RoleChampion {
		r.championLoaded(m)
	}
	return nil
}

// logLoadFailed logs a failed load of version for role. With a model of the role being
// served it says that one is kept; without one (the first load at start), it says that
// none is served and what to do, since "keeping the current one" would promise a bundle
// that does not exist.
func (r *Reloader) logLoadFailed(role registry.Role, version string, err error) {
	cur := r.Models.get(role)
	if cur != nil {
		r.log().Error("bundle load failed, keeping the current one", "role", role.String(), "version", version,
			"current", cur.Version, "err", err)
		return
	}
	fix := "fix the cause the error names, or point the " + role.String() + " at a version that loads (trainer registry promote|set-challenger)"
	if errors.Is(err, features.ErrAuthorKey) {
		fix = "the bundle's authors are pseudonymised: start predictd with the key it was trained with (--author-key-file F or $" +
			features.AuthorKeyEnv + ")"
	}
	r.log().Error("bundle load failed and no "+role.String()+" bundle is loaded", "role", role.String(), "version", version,
		"err", err, "fix", fix)
}

// championLoaded runs what follows a champion load: OnChampion, and the challenger
// models of the same version when ChallengerFollowsChampion is set (a failure is logged
// and counted by Reload, and the champion serves alone).
func (r *Reloader) championLoaded(m *Model) {
	if r.OnChampion != nil {
		r.OnChampion(m)
	}
	if r.ChallengerFollowsChampion {
		if err := r.Reload(registry.RoleChallenger, m.Version); err != nil {
			r.set(registry.RoleChallenger, nil) // never models of another version
		}
	}
}

// Follow applies the pointer events of a registry watch until events is closed: a new
// version is loaded (Reload), a cleared challenger pointer unloads the challenger, and a
// cleared champion pointer or a pointer read error is logged while the champion keeps
// serving. An event naming the version already served loads nothing; after a failed
// load (the pointer rolled back to the served version) it sets the reload-success
// metric back to 1.
func (r *Reloader) Follow(events <-chan registry.Event) {
	for ev := range events {
		cur := r.Models.get(ev.Role)
		switch {
		case ev.Role == registry.RoleChallenger && r.ChallengerFollowsChampion:
			// The challenger is the champion bundle's challenger models.
		case ev.Err != nil:
			r.log().Error("reading pointer failed, keeping the current bundle", "role", ev.Role.String(), "err", ev.Err)
		case ev.Version == "" && ev.Role == registry.RoleChallenger:
			if cur != nil {
				r.set(registry.RoleChallenger, nil)
				r.log().Info("unloaded challenger", "version", cur.Version)
			}
		case ev.Version == "":
			r.log().Error("champion pointer cleared, keeping the current bundle")
		case cur != nil && cur.Version == ev.Version:
			// The pointer names the bundle being served again (a rollback after a
			// failed load): the role serves what its pointer says, so the last
			// reload is successful again (issue 15 item 12).
			if r.setFailed(ev.Role, false) {
				r.Metrics.restored(ev.Role)
				r.log().Info("pointer is back at the served bundle", "role", ev.Role.String(), "version", ev.Version)
			}
			if ev.Role == registry.RoleChampion {
				r.clearFallback()
			}
		default:
			_ = r.Reload(ev.Role, ev.Version) // logged and counted by Reload; the old model stays
		}
	}
}

// StartChampion loads the champion at start: the version the champion pointer names,
// and when that fails, the newest older version of versions (a registry's List) that
// loads. A bad publish followed by a restart thus serves the last good bundle instead
// of nothing. Versions newer than the pointer are not tried: they were never made
// champion or were rolled back from. A fallback is logged at error level, reported by
// Models.ChampionFallback (and GetModelInfo) and by the metric
// predictd_model_champion_fallback; the reload-success metric keeps saying that the
// pointer's version failed. StartChampion returns the pointer's load error when no
// version loads.
func (r *Reloader) StartChampion(pointer string, versions []string) error {
	err := r.Reload(registry.RoleChampion, pointer)
	if err == nil {
		return nil
	}
	for i := len(versions) - 1; i >= 0; i-- {
		v := versions[i]
		if v >= pointer { // version names sort by publication time
			continue
		}
		m, lerr := r.Load(registry.RoleChampion, v)
		if lerr != nil {
			r.log().Error("fallback candidate failed to load", "role", registry.RoleChampion.String(), "version", v, "err", lerr)
			continue
		}
		m.Role, m.Version = registry.RoleChampion, v
		if m.LoadedAt.IsZero() {
			m.LoadedAt = time.Now()
		}
		r.set(registry.RoleChampion, m)
		r.Models.pointer.Store(&pointer)
		r.Metrics.fallback(true)
		r.log().Error("THE CHAMPION FAILED TO LOAD: serving an older version in its place until the pointer moves",
			"role", registry.RoleChampion.String(), "pointer", pointer, "serving", v, "err", err)
		r.championLoaded(m)
		return nil
	}
	return err
}

// clearFallback ends a fallback: the champion served is the pointer's.
func (r *Reloader) clearFallback() {
	if r.Models.pointer.Swap(nil) != nil {
		r.Metrics.fallback(false)
		r.log().Info("the champion served is the pointer's again")
	}
}

// set makes model the model of role (nil removes it) and says so in the metrics.
func (r *Reloader) set(role registry.Role, model *Model) {
	r.Models.Set(role, model)
	version := ""
	if model != nil {
		version = model.Version
	}
	r.Metrics.serving(role, version)
}

func (r *Reloader) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}
