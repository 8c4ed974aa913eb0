package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/sqpredict/sqpredict/client"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// ExampleDial asks a predictd on the default address for the build time of one build.
// (No output: it needs a running server.)
func ExampleDial() {
	c, err := client.Dial("127.0.0.1:50051", client.Config{
		DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := c.PredictBuildTime(ctx, &pb.PredictBuildTimeRequest{
		Changes: []*pb.Change{{ChangeId: "C1", Author: "dev0001", LinesAdded: proto.Float64(120)}},
		Builds:  []*pb.BuildQuery{{BuildId: "B1", ChangeId: "C1"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	p := resp.GetPredictions()[0]
	fmt.Printf("%s: %.0f ± %.0f s (model %s)\n", p.GetBuildId(), p.GetMeanSeconds(), p.GetStddevSeconds(), p.GetModel().GetVersion())
}
