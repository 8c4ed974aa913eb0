// Package server is the gRPC adapter of predictd: it converts protobuf messages of
// package sqpredict.v1 to scoring types and back, validates input at the boundary and
// reports errors with gRPC status codes.
//
// The conversions of the speculation math live in speculation.go:
// SpeculationFromProto and SpeculationToProto for the speculation tree and decisions,
// BatchFromProto and BatchToProto for batching. Conversion errors name the offending
// request field (for example "changes[3].change_id") and wrap scoring.ErrInvalidQueue or
// scoring.ErrInvalidBatch, so that one function can map them to InvalidArgument.
package server
