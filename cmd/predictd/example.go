package main

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// exampleRequest returns a grpcurl command line, ready to paste from the repository
// root, that asks the server at addr for the build time of one build.
func exampleRequest(addr string, cfg *config) string {
	req := &pb.PredictBuildTimeRequest{
		Changes: []*pb.Change{{
			ChangeId:        "C1",
			Author:          "dev0001",
			SubmittedAt:     timestamppb.New(timeExample),
			TargetsChanged:  proto.Float64(3),
			LinesAdded:      proto.Float64(120),
			LinesRemoved:    proto.Float64(30),
			Hunks:           proto.Float64(6),
			FilesChanged:    proto.Float64(4),
			Commits:         proto.Float64(1),
			AffectedTargets: &pb.TargetList{Names: []string{"//app/core", "//app/ui"}},
		}},
		Builds: []*pb.BuildQuery{{
			BuildId:     "B1",
			ChangeId:    "C1",
			Speculation: &pb.SpeculationCounts{Height: proto.Float64(0), QueueAhead: proto.Float64(2)},
		}},
	}
	body, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
	if err != nil {
		panic("predictd: example request: " + err.Error()) // a fixed, valid message
	}
	var flags []string
	if cfg.tlsCert == "" {
		flags = append(flags, "-plaintext")
	}
	if !cfg.reflection {
		flags = append(flags, "-import-path proto -proto sqpredict/v1/predictor.proto")
	}
	return fmt.Sprintf("grpcurl %s -d '%s' %s sqpredict.v1.Predictor/PredictBuildTime",
		strings.Join(flags, " "), body, addr)
}

// timeExample is the submission time of the example change.
var timeExample = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
