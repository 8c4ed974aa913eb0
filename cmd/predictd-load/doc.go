// Command predictd-load sends requests to a running predictd at a fixed rate and
// prints the latency distribution and the errors: the load generator of predictd's
// benchmarks (BENCHMARKS.md).
//
// Usage:
//
//	predictd-load [--target 127.0.0.1:50051] [--mode single|batch|speculation]
//	              [--rate 2000] [--duration 10s] [--batch 1000] [--changes 500]
//	              [--concurrency 256] [--accept-shed] [--attempts 1]
//	              [--tls-ca CA.pem [--tls-cert CLIENT.pem --tls-key CLIENT-KEY.pem]]
//
// single sends PredictBuildTime with one build per request; batch sends --batch builds
// per request; speculation sends ScoreSpeculation for a queue of --changes pending
// changes whose P-succ, P-conf and build times are all left to the models. Requests are
// built from a fixed seed; latencies are measured from each request's scheduled time
// (package internal/loadgen). Calls go through client.Client: with --attempts above 1,
// Unavailable and shed requests are retried, their latency including the retries. With
// --accept-shed, RESOURCE_EXHAUSTED answers (a
// predictd shedding load, --max-inflight or --max-request-memory) are counted apart and not as failures. With
// --tls-ca the connection uses TLS; --tls-cert and --tls-key present a client
// certificate, as a predictd started with --tls-client-ca requires.
package main
