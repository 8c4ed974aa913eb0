// Package client is a small Go client of predictd for the speculation engine: it dials
// with the caller's gRPC options, offers one typed method per call of
// sqpredict.v1.Predictor, and retries a call that fails with Unavailable (no model
// loaded yet, a server restarting) or that the server shed under load
// (ResourceExhausted with a RetryInfo, --max-inflight or --max-request-memory) a bounded number of times with
// exponential backoff, never past the caller's context. TLSCredentials makes the
// credentials of a TLS or mutual-TLS predictd.
//
//	c, err := client.Dial("127.0.0.1:50051", client.Config{
//		DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())},
//	})
//	resp, err := c.PredictBuildTime(ctx, req)
package client
