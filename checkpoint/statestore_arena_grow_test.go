package checkpoint

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestArenaGrowsWithRoomToSpare writes epochs of a join's shape into a
// kept changelog arena (one value an epoch, lent by Extend after
// LogUpsertFrom's reservation, then a small one written) with each epoch
// a fifth larger than the one before: the arena grows with a quarter to
// spare, so every other epoch reuses its array, and a growth keeps the
// epoch's bytes. With the arena grown to the exact size (slices.Grow from
// an empty arena) every epoch needed a new array.
func TestArenaGrowsWithRoomToSpare(t *testing.T) {
	a := &changeArena{}
	size := 300_000
	fresh := 0
	var last *byte
	for e := range 10 {
		a.reset()
		a.values = growArena(a.values, size)
		w := arenaValues{a}
		big := w.Extend(size)
		for i := range big {
			big[i] = byte(i + e)
		}
		a.addKey([]byte("b"), true)
		small := bytes.Repeat([]byte{byte(e)}, 40_000)
		if _, err := w.Write(small); err != nil {
			t.Fatal(err)
		}
		a.addKey([]byte("s"), true)
		for i, b := range a.values[:size] {
			if b != byte(i+e) {
				t.Fatalf("epoch %d: byte %d of the first value is %d after the arena grew, want %d", e, i, b, byte(i+e))
			}
		}
		if !bytes.Equal(a.values[size:], small) {
			t.Fatalf("epoch %d: the second value is not what was written", e)
		}
		if p := unsafe.SliceData(a.values); p != last {
			fresh++
			last = p
		}
		size += size / 5
	}
	if fresh > 6 {
		t.Fatalf("10 epochs, each a fifth larger: the arena took %d new arrays, want at most 6", fresh)
	}
}
