package stateful

import (
	"runtime"
	"testing"
)

// TestJoinLinksAllocateWhatTheyKeep: 100,000 links added 250 at a time
// (an epoch's batch of a side that never evicts) allocate at most the
// links kept, one page of slack and the first page's doublings: 4 bytes
// a link and 17 KiB over. As one array doubled (main before session 28)
// the same adds allocated about 1 MB for the 400 KB kept.
func TestJoinLinksAllocateWhatTheyKeep(t *testing.T) {
	const total, step = 100_000, 250
	var l joinLinks
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for l.len() < total {
		l.extend(step)
	}
	runtime.ReadMemStats(&after)
	links := int64(after.TotalAlloc - before.TotalAlloc)
	bound := int64(4*total + 4*linkPage + 4*2*linkPage + 4096)
	t.Logf("%d bytes allocated for %d links", links, l.len())
	if links > bound {
		t.Fatalf("%d links allocated %d bytes, want at most %d", l.len(), links, bound)
	}
}

// TestJoinLinksMatchArray: links extended by uneven steps and set at
// random read back as a plain array does, every new link -1; a
// renumbering's fresh links (filledLinks) likewise.
func TestJoinLinksMatchArray(t *testing.T) {
	var l joinLinks
	var model []int32
	seed := uint64(1)
	rnd := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for step := 0; l.len() < 3*linkPage+77; step++ {
		n := 1 + rnd(900)
		if step == 3 {
			n = linkPage + 5 // a step across the first page's end
		}
		l.extend(n)
		for range n {
			model = append(model, -1)
		}
		for range 50 {
			g := int32(rnd(len(model)))
			v := int32(rnd(1 << 20))
			l.set(g, v)
			model[g] = v
		}
		if l.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, l.len(), len(model))
		}
		for g, want := range model {
			if got := l.at(int32(g)); got != want {
				t.Fatalf("step %d: link %d = %d, want %d", step, g, got, want)
			}
		}
		if l.capacity() < l.len() {
			t.Fatalf("step %d: capacity %d below len %d", step, l.capacity(), l.len())
		}
	}
	f := filledLinks(2*linkPage + 3)
	for g := range f.len() {
		if f.at(int32(g)) != -1 {
			t.Fatalf("filled link %d = %d, want -1", g, f.at(int32(g)))
		}
	}
}
