package registry

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchFiles returns a bundle of the given number of files of size bytes each, filled
// with seeded random letters.
func benchFiles(files, size int) map[string]string {
	rng := rand.New(rand.NewPCG(1, 1))
	out := map[string]string{}
	var sb strings.Builder
	for i := range files {
		sb.Reset()
		for range size {
			sb.WriteByte(byte('a' + rng.IntN(26)))
		}
		out[string(rune('a'+i))+".bin"] = sb.String()
	}
	return out
}

// loadSink keeps benchmark results alive.
var loadSink *Bundle

func benchmarkLoad(b *testing.B, files, size int) {
	r := newTestRegistry(b)
	v := publish(b, r, benchFiles(files, size), PublishOptions{Champion: true})
	b.SetBytes(int64(files * size))
	b.ReportAllocs()
	for b.Loop() {
		c, err := r.Champion(testRepo)
		if err != nil {
			b.Fatal(err)
		}
		if loadSink, err = r.Load(testRepo, c, testSchema); err != nil {
			b.Fatal(err)
		}
	}
	_ = v
}

// BenchmarkLoad4x16KiB is a bundle of small models.
func BenchmarkLoad4x16KiB(b *testing.B) { benchmarkLoad(b, 4, 16<<10) }

// BenchmarkLoad4x4MiB is a bundle with a large developer table.
func BenchmarkLoad4x4MiB(b *testing.B) { benchmarkLoad(b, 4, 4<<20) }

// versionSink keeps benchmark results alive.
var versionSink string

// BenchmarkPublish4x16KiB publishes a bundle of small models as champion, with every
// fsync Publish does; it measures the disk as much as the code.
func BenchmarkPublish4x16KiB(b *testing.B) {
	r := newTestRegistry(b)
	write := writeFiles(benchFiles(4, 16<<10))
	m := testManifest()
	ctx := context.Background()
	b.SetBytes(4 * 16 << 10)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if versionSink, err = r.Publish(ctx, testRepo, write, m, PublishOptions{Champion: true}); err != nil {
			b.Fatal(err)
		}
	}
}
