// Command predictd serves sqpredict.v1.Predictor: P-succ, P-conf, build times and
// speculation plans from the champion (and optional challenger) bundle of a model
// registry, reloaded without a restart when the registry's pointers move.
//
// Usage:
//
//	predictd [flags]
//
// Without --registry it serves the default bundle built into the binary (trained on a
// small synthetic history, see internal/defaultbundle) on 127.0.0.1:50051. It reports
// NOT_SERVING on gRPC health until the first bundle is loaded, exits non-zero when that
// load fails, and on SIGINT or SIGTERM drains: health NOT_SERVING, GracefulStop (Stop
// after --shutdown-timeout), then the reload loop stops. It logs the requests served,
// drained and cut off, and exits non-zero when the stop cut requests off.
//
// Operators' defaults: gRPC reflection is on when --listen is a loopback address (so
// that `grpcurl -plaintext 127.0.0.1:50051 list` works) and off otherwise unless
// --reflection is given; --metrics-listen serves /metrics, /healthz (the process is up)
// and /readyz (a champion is loaded and the server is not stopping); --log-format json
// writes JSON logs; --version prints the version. --challenger-share or --shadow with no
// challenger loaded is logged as a warning.
//
// The challenger is the bundle the registry's challenger pointer names, or, with
// --challenger-models gbm-success,gbm-conflict,ngboost-normal, the champion bundle's own
// challenger models (trained by trainer train --challengers) in place of the champions
// of their sections, reloaded with the champion; either is routed by
// --challenger-share or runs in --shadow.
//
// Bundles whose authors the trainer pseudonymised (trainer train --author-key-file) are
// served only with the same key: --author-key-file F, default $SQPREDICT_AUTHOR_KEY_FILE.
// predictd hashes each incoming author with it before the developer-table lookup; a
// bundle made with another key, or any such bundle without a key, is refused with an
// error naming the key id it needs. Registry files are owner-only: run predictd as the
// trainer's user.
package main
