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
//
// # Limits and hostile load
//
// Every limit is a flag whose default is the server package's Default* constant, and
// GetModelInfo reports them (those its ServerLimits message has a field for):
//
//	--max-batch 10000            items in any list of a request
//	--max-capacity 4096          speculation capacity
//	--max-explored 262144        prefixes one speculation expands
//	--max-prefix-words 4194304   prefix-assignment words one speculation stores
//	--max-node-ids 262144        change ids one plan names
//	--max-response-bytes 4MiB    response size (a plan loses its least likely nodes)
//	--max-request-time 10s       run time whatever the deadline
//	--max-recv-bytes 8MiB        request size (RESOURCE_EXHAUSTED above)
//	--max-inflight 256           requests of one method in flight at once (all
//	                             connections); more are shed with RESOURCE_EXHAUSTED
//	                             before being read
//	--max-request-memory 64MiB   estimated memory of the admitted requests (8 bytes
//	                             per byte of a message); a message that does not fit
//	                             is shed before being decoded. Sheds of both carry a
//	                             RetryInfo and are counted in
//	                             predictd_requests_shed_total{limit}
//	--max-concurrent-streams 32  streams per connection: a client above it waits
//	                             instead of being shed. Memory is at most about
//	                             30 MB + --max-request-memory + the messages being
//	                             read before they are weighed: up to
//	                             --max-concurrent-streams per connection and
//	                             --max-inflight per method, each at most
//	                             --max-recv-bytes
//	--keepalive-min-time 10s     fastest client ping rate tolerated
//	--keepalive-time 1m0s        ping a silent connection, and close it when the ack
//	--keepalive-timeout 20s      does not come in time
//	--max-connection-idle 15m0s  close a connection without requests
//	--handshake-timeout 10s      connection setup (TLS handshake, HTTP/2 preface)
//
// --memory-limit (384 MiB; 0 leaves $GOMEMLIMIT's) is the Go runtime's soft memory
// limit: admission releases a request's weight when its stream ends, but the collector
// would otherwise let the garbage of finished requests grow the heap to twice what is
// live before collecting it.
//
// # Authentication
//
// --tls-cert and --tls-key serve TLS; --tls-client-ca CA.pem adds mutual TLS, the
// supported way to restrict who may call: a client must present a certificate signed by
// a CA of that file, or its connection is refused. predictd-load and client.TLSCredentials
// present one.
//
// # Prediction log
//
// --prediction-log DIR writes every prediction as a JSON line, off the request path: a
// queue of at most --prediction-log-queue records (65536) drained by one goroutine;
// when it is full, records are dropped and counted in
// predictd_prediction_log_dropped_records_total, and requests never wait. Files rotate
// at --prediction-log-file-bytes (64 MiB); the oldest rotated files are removed beyond
// --prediction-log-keep (16) files or --prediction-log-max-bytes (1 GiB) in all. The
// queue is drained and the file flushed at shutdown.
package main
