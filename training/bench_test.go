package training

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sqpredict/sqpredict/datasets/synth"
	"github.com/sqpredict/sqpredict/registry"
)

// BenchmarkTrainIOS90 is the weekly job on 90 days of the ios profile at its default
// rate (about 40 000 changes, 63 000 builds, 300 000 candidate pairs): Train with the
// default config, then Publish. Each stage's time is reported as <stage>-s/op. Run with
//
//	go test ./training -run '^$' -bench TrainIOS90 -benchtime 1x
func BenchmarkTrainIOS90(b *testing.B) {
	ctx := context.Background()
	h, err := synth.Generate(ctx, synth.Config{Profile: "ios", Days: 90, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	asOf := synth.DefaultStart.Add(91 * 24 * time.Hour)
	stages := map[string]time.Duration{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		reg, err := registry.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		res, err := Train(ctx, h, Config{AsOf: asOf})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := Publish(ctx, reg, res); err != nil {
			b.Fatal(err)
		}
		stages["publish"] += time.Since(t0)
		for _, s := range res.Stages {
			stages[s.Name] += s.Duration
		}
	}
	for name, d := range stages {
		b.ReportMetric(d.Seconds()/float64(b.N), strings.ReplaceAll(name, " ", ":")+"-s/op")
	}
}
