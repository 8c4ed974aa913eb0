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
// after --shutdown-timeout), then the reload loop stops.
package main
