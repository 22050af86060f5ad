package nexmark

import (
	"testing"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// BenchmarkEngineWindows runs the windowed aggregations q5 (sliding
// windows) and q11 (session windows) through the engine alone, the input
// (FullSize: 200K events in 20 epochs) generated before the timer, so that
// a CPU profile shows the stateful operators and not the generator:
//
//	go test -run '^$' -bench EngineWindows -cpuprofile cpu.prof ./bench/nexmark/
func BenchmarkEngineWindows(b *testing.B) {
	batches, err := Generate(harness.InputAllocator(), Config{Seed: 1}, FullSize)
	if err != nil {
		b.Fatal(err)
	}
	defer releaseBatches(batches)
	for _, name := range []string{"q5", "q11"} {
		q, ok := lookup(name)
		if !ok {
			b.Fatalf("no query %s", name)
		}
		b.Run(name, func(b *testing.B) { engineEpochs(b, q, batches) })
	}
}
