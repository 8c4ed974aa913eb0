package training

import (
	"context"
	"testing"
)

// BenchmarkSelectRelative is the build-time champion's choice of form on a table the
// size of a BuildFast repository's training rows (1,200 rows, level shifts of 1.5×), with
// the default NGBoost settings: the inner fits it costs on top of the champion's own.
// Run with
//
//	go test ./training -run '^$' -bench SelectRelative -benchtime 3x
func BenchmarkSelectRelative(b *testing.B) {
	ctx := context.Background()
	t := levelShiftTable(1200, 1.5, 1)
	cfg := Config{Seed: 1}
	for b.Loop() {
		if _, err := SelectRelative(ctx, t, nil, &cfg); err != nil {
			b.Fatal(err)
		}
	}
}
