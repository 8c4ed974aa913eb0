package loadgen_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/internal/loadgen"
)

func TestRun(t *testing.T) {
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Rate: 1000, Duration: 200 * time.Millisecond,
		Call: func(_ context.Context, i int) error {
			time.Sleep(time.Millisecond)
			if i%50 == 0 {
				return errors.New("boom")
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 200 || res.Errors != 4 || res.FirstError == nil {
		t.Errorf("Run = %v, want 200 requests and 4 errors", res)
	}
	if res.SendP50 < time.Millisecond || res.SendP50 > res.P50 || res.SendP99 > res.P99 {
		t.Errorf("from the call p50 %v p99 %v: want 1ms <= p50 and each at most the scheduled one (%v, %v)", res.SendP50, res.SendP99, res.P50, res.P99)
	}
	if res.P50 < time.Millisecond || res.P50 > res.P99 || res.P99 > res.Max {
		t.Errorf("latencies p50 %v p99 %v max %v: want 1ms <= p50 <= p99 <= max", res.P50, res.P99, res.Max)
	}
	if _, err := loadgen.Run(context.Background(), loadgen.Config{}); err == nil {
		t.Error("Run with a zero config succeeded")
	}
}
