package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
	"github.com/sqpredict/sqpredict/scoring"
	"github.com/sqpredict/sqpredict/server"
)

func init() {
	register(command{name: "speculate", summary: "select the speculative builds to run for a queue (protojson in and out)", run: runSpeculate})
}

// jsonOut is how the speculation commands print protobuf messages: snake_case field
// names as in the .proto file, every field present.
var jsonOut = protojson.MarshalOptions{Multiline: true, Indent: "  ", UseProtoNames: true, EmitUnpopulated: true}

func runSpeculate(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "speculate", "--in request.json")
	in := fs.String("in", "", "`file` holding a sqpredict.v1.SpeculationRequest in protojson; - reads standard input (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var data []byte
	var err error
	if *in == "-" {
		if e.stdin == nil {
			return fmt.Errorf("%w: --in - reads standard input, which this run does not have", errUsage)
		}
		data, err = io.ReadAll(e.stdin)
	} else {
		data, err = os.ReadFile(*in)
	}
	if err != nil {
		return err
	}
	req := &pb.SpeculationRequest{}
	if err := protojson.Unmarshal(data, req); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	q, cfg, err := server.SpeculationFromProto(req)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	plan, err := scoring.Speculate(q, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	out, err := jsonOut.Marshal(server.SpeculationToProto(req, plan))
	if err != nil {
		return errors.Join(errors.New("encoding the response"), err)
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", out)
	return err
}
