package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sqpredict/sqpredict/scoring"
)

func TestToStatus(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	inv := &InvalidRequestError{Violations: []Violation{{Field: "changes[0].hunks", Description: "must not be negative, got -1"}}}
	for _, tc := range []struct {
		name     string
		err      error
		want     codes.Code
		wantMsg  string // exact message, when set
		wantViol string // a field violation, when set
	}{
		{"nil", nil, codes.OK, "", ""},
		{"invalid request", fmt.Errorf("wrapped: %w", inv), codes.InvalidArgument, "", "changes[0].hunks"},
		{"invalid queue", fmt.Errorf("server: planning: %w", scoring.ErrInvalidQueue), codes.InvalidArgument, "", ""},
		{"invalid config", scoring.ErrInvalidConfig, codes.InvalidArgument, "", ""},
		{"no model", fmt.Errorf("server: %w", ErrNoModel), codes.Unavailable, "", ""},
		{"no P-conf model", fmt.Errorf("x: %w: no labels", scoring.ErrNoConflictModel), codes.FailedPrecondition, "", ""},
		{"canceled", context.Canceled, codes.Canceled, "", ""},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "", ""},
		{"already a status", status.Error(codes.ResourceExhausted, "slow down"), codes.ResourceExhausted, "slow down", ""},
		{"anything else", errors.New("disk on fire at /secret/path"), codes.Internal, "internal error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := toStatus(log, "M", tc.err)
			st := status.Convert(got)
			if st.Code() != tc.want {
				t.Fatalf("toStatus(%v) = %v, want %v", tc.err, got, tc.want)
			}
			if tc.wantMsg != "" && st.Message() != tc.wantMsg {
				t.Errorf("toStatus(%v) message = %q, want %q", tc.err, st.Message(), tc.wantMsg)
			}
			if tc.wantViol != "" {
				found := false
				for _, d := range st.Details() {
					if br, ok := d.(*errdetails.BadRequest); ok {
						for _, v := range br.GetFieldViolations() {
							found = found || v.GetField() == tc.wantViol
						}
					}
				}
				if !found {
					t.Errorf("toStatus(%v) details = %v, want a violation of %s", tc.err, st.Details(), tc.wantViol)
				}
			}
		})
	}
}

func TestViolationsBounded(t *testing.T) {
	var v violations
	for i := range 3 * maxViolations {
		v.add(fmt.Sprint("f", i), "bad")
	}
	var inv *InvalidRequestError
	if !errors.As(v.err(), &inv) || len(inv.Violations) != maxViolations+1 || !errors.Is(inv, ErrInvalidRequest) {
		t.Errorf("violations = %v, want %d listed plus a count of the rest", v.err(), maxViolations)
	}
}
