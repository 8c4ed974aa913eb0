package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sqpredict/sqpredict/scoring"
)

// Errors of the server, wrapped with the request field or model they concern.
var (
	// ErrInvalidRequest is a request that cannot be answered as it is; the error is an
	// *InvalidRequestError listing the offending fields.
	ErrInvalidRequest = errors.New("server: invalid request")
	// ErrNoModel is a request that arrived before any bundle was loaded; the client may
	// retry.
	ErrNoModel = scoring.ErrNoModel
	// ErrConfig is a Config that cannot be used.
	ErrConfig = errors.New("server: invalid config")
	// ErrResponseTooLarge is a response above Limits.MaxResponseBytes that cannot be
	// cut; it becomes RESOURCE_EXHAUSTED.
	ErrResponseTooLarge = errors.New("server: response too large")
)

// Violation is one offending field of a request: its path in the request message,
// for example "changes[3].change.lines_added", and what is wrong with it.
type Violation struct {
	Field       string
	Description string
}

// InvalidRequestError lists the fields of a request that make it invalid. It wraps
// ErrInvalidRequest and becomes an InvalidArgument status with an errdetails.BadRequest.
type InvalidRequestError struct {
	Violations []Violation
}

// Error implements error.
func (e *InvalidRequestError) Error() string {
	var b strings.Builder
	b.WriteString("server: invalid request: ")
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", v.Field, v.Description)
	}
	return b.String()
}

// Unwrap returns ErrInvalidRequest.
func (e *InvalidRequestError) Unwrap() error { return ErrInvalidRequest }

// maxViolations bounds the violations reported for one request, so that a huge bad
// batch gets a short answer.
const maxViolations = 20

// violations collects the field violations of one request.
type violations struct {
	list    []Violation
	dropped int
}

// add records a violation of field, formatting its description.
func (v *violations) add(field, format string, args ...any) {
	if len(v.list) >= maxViolations {
		v.dropped++
		return
	}
	v.list = append(v.list, Violation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// err returns the collected violations as an *InvalidRequestError, or nil.
func (v *violations) err() error {
	if len(v.list) == 0 {
		return nil
	}
	list := v.list
	if v.dropped > 0 {
		list = append(list, Violation{Field: "", Description: fmt.Sprintf("%d more violations not listed", v.dropped)})
	}
	return &InvalidRequestError{Violations: list}
}

// toStatus is the one place that turns an error into a gRPC status (STYLE rule 13):
// invalid input is InvalidArgument with the field violations attached, a server
// without a model is Unavailable, context errors keep their code, and anything else is
// Internal with a generic message, the detail going to the log. A model fault
// (ErrModelFault) is Internal too: the caller's input was fine.
func toStatus(log *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err // already a status, e.g. from a recovered panic
	}
	var inv *InvalidRequestError
	switch {
	case errors.As(err, &inv):
		st := status.New(codes.InvalidArgument, err.Error())
		br := &errdetails.BadRequest{}
		for _, v := range inv.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
		}
		if ds, derr := st.WithDetails(br); derr == nil {
			st = ds
		}
		return st.Err()
	case errors.Is(err, scoring.ErrInvalidQueue), errors.Is(err, scoring.ErrInvalidConfig), errors.Is(err, scoring.ErrInvalidBatch):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, scoring.ErrNoConflictModel):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, ErrNoModel):
		return status.Error(codes.Unavailable, "no model loaded yet")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	case errors.Is(err, ErrResponseTooLarge):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, ErrModelFault):
		// Logged with the model version and counted where it was found.
		return status.Error(codes.Internal, "internal error: the model produced an invalid prediction")
	}
	log.Error("internal error", "method", method, "err", err)
	return status.Error(codes.Internal, "internal error")
}
