package checkpoint

import (
	"fmt"
	"testing"
)

// BenchmarkChangelogViews is a window's close in a changelog arena:
// 8,000 deletes of 40-byte keys that lie apart in the caller's memory (an
// aggregation's kept store keys, by group), logged as the caller gathered
// them end to end (gathered: a copy into its scratch, then the arena's
// copy) or from views (LogDeletesOf: the arena's copy only). kept reuses
// the scratch and the arena across operations, as a query's later
// epochs do; fresh starts both empty, as a query's first window does
// (its growth is fresh memory).
func BenchmarkChangelogViews(b *testing.B) {
	const n, keyLen = 8000, 40
	keys := make([][]byte, n)
	for i := range keys {
		// Apart: each in its own allocation, as kept keys are by chunk.
		keys[i] = fmt.Appendf(make([]byte, 0, 64), "%0*d", keyLen, i)
	}
	for _, fresh := range []bool{false, true} {
		name := map[bool]string{false: "kept", true: "fresh"}[fresh]
		b.Run("gathered/"+name, func(b *testing.B) {
			var a changeArena
			var scratch []byte
			var ends []uint32
			b.SetBytes(n * keyLen)
			for b.Loop() {
				if fresh {
					a, scratch, ends = changeArena{}, nil, nil
				}
				a.reset()
				scratch, ends = scratch[:0], ends[:0]
				for _, k := range keys {
					scratch = append(scratch, k...)
					ends = append(ends, uint32(len(scratch)))
				}
				a.addBatch(scratch, ends, nil, nil, false)
			}
		})
		b.Run("views/"+name, func(b *testing.B) {
			var a changeArena
			views := EntriesFunc(func(i int) ([]byte, []byte) { return keys[i], nil })
			b.SetBytes(n * keyLen)
			for b.Loop() {
				if fresh {
					a = changeArena{}
				}
				a.reset()
				a.addKeys(n, n*keyLen, views)
			}
		})
	}
}
