// Package loadgen drives a call at a fixed request rate (an open loop) and reports its
// latency distribution, for predictd's benchmarks over loopback.
//
// Requests are scheduled at i/Rate after the start, whether or not earlier ones have
// returned, and each latency is measured from the request's scheduled time, so a
// server that falls behind shows it in the tail instead of slowing the generator down
// (no coordinated omission).
package loadgen
