package stateful

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// recordingWriter records the changes logged into it, one line each.
type recordingWriter struct{ log []string }

func (w *recordingWriter) LogUpsert(key, value []byte) {
	w.log = append(w.log, fmt.Sprintf("+%s=%s", key, value))
}
func (w *recordingWriter) LogDelete(key []byte) { w.log = append(w.log, fmt.Sprintf("-%s", key)) }
func (w *recordingWriter) SetLiveRows(int64)    {}

// batchingWriter is a recordingWriter that takes batches, recording
// each batch's entries as LogUpsert/LogDelete would, and the batches.
type batchingWriter struct {
	recordingWriter
	batches int
}

func (w *batchingWriter) LogUpserts(keys []byte, kend []uint32, vals []byte, vend []uint32) {
	w.batches++
	var k, v uint32
	for i, ke := range kend {
		w.LogUpsert(keys[k:ke], vals[v:vend[i]])
		k, v = ke, vend[i]
	}
}

func (w *batchingWriter) LogDeletes(keys []byte, kend []uint32) {
	w.batches++
	var k uint32
	for _, ke := range kend {
		w.LogDelete(keys[k:ke])
		k = ke
	}
}

func (w *batchingWriter) LogUpsertsOf(n int, entries checkpoint.ChangelogEntries) int {
	w.batches++
	bytes := 0
	for i := range n {
		k, v := entries.Entry(i)
		w.LogUpsert(k, v)
		bytes += len(k) + len(v)
	}
	return bytes
}

func (w *batchingWriter) LogDeletesOf(n int, entries checkpoint.ChangelogEntries) int {
	w.batches++
	bytes := 0
	for i := range n {
		k, _ := entries.Entry(i)
		w.LogDelete(k)
		bytes += len(k)
	}
	return bytes
}

// TestLogBatchesByPartition: the entries laid out by partition are a
// stable sort of them by partition, and the changes logged from the
// scratch reach every partition's writer in entry order, as one call per
// partition to a ChangelogBatcher and entry by entry to a plain
// ChangelogWriter, with the same changes and key counts.
func TestLogBatchesByPartition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var b logBatches
	for round := range 30 {
		parts := 1 + rng.IntN(9)
		n := rng.IntN(200)
		ps := b.setParts(n)
		for i := range ps {
			ps[i] = int32(rng.IntN(parts))
		}
		b.byPartition(parts)
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(x, y int32) int { return int(b.part[x] - b.part[y]) })
		if !slices.Equal(b.order[:n], want) {
			t.Fatalf("round %d: order %v, want %v", round, b.order[:n], want)
		}
		plain, batching := make([]*recordingWriter, parts), make([]*batchingWriter, parts)
		var cs [2]changelogState
		for p := range parts {
			plain[p], batching[p] = &recordingWriter{}, &batchingWriter{}
			cs[0].writers = append(cs[0].writers, plain[p])
			cs[1].writers = append(cs[1].writers, batching[p])
		}
		for i := range cs {
			cs[i].bindBatchers()
			cs[i].sizeUpserts() // as bind does
			cs[i].rows = make([]int64, parts)
		}
		if cs[0].batchers != nil || cs[1].batchers == nil {
			t.Fatal("batchers bound to the wrong writers")
		}
		// Deletes (removesOf), upserts through the scratch (upserts), or
		// from views (upsertsOf).
		del, views := round%3 == 1, round%3 == 2
		for i := range cs {
			for p := range parts {
				ents := b.entries(p)
				if len(ents) == 0 {
					continue
				}
				switch {
				case del:
					cs[i].removesOf(p, len(ents), checkpoint.EntriesFunc(func(j int) ([]byte, []byte) { return fmt.Appendf(nil, "k%d", ents[j]), nil }))
				case views:
					cs[i].upsertsOf(p, len(ents), len(ents)/2, checkpoint.EntriesFunc(func(j int) ([]byte, []byte) {
						return fmt.Appendf(nil, "k%d", ents[j]), fmt.Appendf(nil, "v%d", ents[j]*3)
					}))
				default:
					b.reset()
					for _, e := range ents {
						b.add(fmt.Appendf(nil, "k%d", e), fmt.Appendf(nil, "v%d", e*3))
					}
					cs[i].upserts(p, &b, len(ents)/2)
				}
			}
		}
		for p := range parts {
			var want []string
			for _, e := range b.entries(p) {
				if del {
					want = append(want, fmt.Sprintf("-k%d", e))
				} else {
					want = append(want, fmt.Sprintf("+k%d=v%d", e, e*3))
				}
			}
			if !slices.Equal(plain[p].log, want) || !slices.Equal(batching[p].log, want) {
				t.Fatalf("round %d partition %d: logged %v and %v, want %v", round, p, plain[p].log, batching[p].log, want)
			}
			if len(want) > 0 && batching[p].batches != 1 {
				t.Fatalf("round %d partition %d: %d batches, want 1", round, p, batching[p].batches)
			}
			if cs[0].rows[p] != cs[1].rows[p] || cs[0].ups[p] != cs[1].ups[p] || cs[0].upBytes[p] != cs[1].upBytes[p] {
				t.Fatalf("round %d partition %d: key counts %d and %d", round, p, cs[0].rows[p], cs[1].rows[p])
			}
		}
	}
}

var _ checkpoint.ChangelogBatcher = (*batchingWriter)(nil)

// TestLogBatchesReusedScratch: the scratch keeps its memory from one
// partition (and epoch) to the next, grown by doubling; after reset a
// smaller batch of other keys holds exactly its own entries, none of the
// larger one before it.
func TestLogBatchesReusedScratch(t *testing.T) {
	var b logBatches
	for i := range 5000 {
		b.add(fmt.Appendf(nil, "key%d", i), fmt.Appendf(nil, "value%d", i))
	}
	if len(b.kend) != 5000 || string(b.keys[b.kend[4998]:b.kend[4999]]) != "key4999" {
		t.Fatalf("first batch: %d entries, last key %q", len(b.kend), b.keys[b.kend[4998]:b.kend[4999]])
	}
	keysCap := cap(b.keys)
	b.reset()
	b.add([]byte("x"), []byte("1"))
	b.add([]byte("yy"), nil)
	if cap(b.keys) != keysCap {
		t.Errorf("the reset scratch was reallocated: cap %d, was %d", cap(b.keys), keysCap)
	}
	if got, want := string(b.keys), "xyy"; got != want {
		t.Errorf("keys after reset %q, want %q", got, want)
	}
	if !slices.Equal(b.kend, []uint32{1, 3}) || !slices.Equal(b.vend, []uint32{1, 1}) || string(b.vals) != "1" {
		t.Errorf("after reset: kend %v, vend %v, vals %q", b.kend, b.vend, b.vals)
	}
}

// TestAppendDoubling: the capacity at least doubles at each growth, and
// the contents are those of append.
func TestAppendDoubling(t *testing.T) {
	var s, want []byte
	grows := 0
	for i := range 100000 {
		c := cap(s)
		v := []byte{byte(i), byte(i >> 8)}
		s = appendDoubling(s, v...)
		want = append(want, v...)
		if cap(s) != c {
			grows++
			if c > 0 && cap(s) < 2*c {
				t.Fatalf("grew from %d to %d", c, cap(s))
			}
		}
	}
	if !slices.Equal(s, want) {
		t.Fatal("contents differ from append's")
	}
	if grows > 12 {
		t.Errorf("%d growths to %d bytes, want at most 12", grows, len(s))
	}
}
