package poisonmem_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// BenchmarkBuildRelease builds and releases a small string array, the
// typical allocation pattern of the operator tests, on Arrow's checked Go
// allocator and on the poisoning one, so the cost of poisoning (stack
// capture, poisoning, moving reallocations) is a ratio of the same run;
// poison-fuzzworker is the poisoning one as a fuzzing worker, without
// stack capture.
func BenchmarkBuildRelease(b *testing.B) {
	for _, tc := range []struct {
		name string
		mem  func() memory.Allocator
	}{
		{"checked-go", func() memory.Allocator { return memory.NewCheckedAllocator(memory.NewGoAllocator()) }},
		{"poison", func() memory.Allocator { return poisonmem.New() }},
		{"poison-fuzzworker", func() memory.Allocator { return poisonmem.New() }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.name == "poison-fuzzworker" {
				asFuzzWorker(b)
			}
			mem := tc.mem()
			for i := 0; i < b.N; i++ {
				bld := array.NewStringBuilder(mem)
				for j := 0; j < 100; j++ {
					bld.Append("value")
				}
				arr := bld.NewStringArray()
				bld.Release()
				arr.Release()
			}
		})
	}
}
