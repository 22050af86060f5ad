package vector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// runKeys builds n rows of keys that mostly come in runs of one key (as
// an epoch's rows of one window do): shape 0 a window struct alone (q7's
// GROUP BY window), 1 a window struct and an int32, 2 an int64 and an
// int16. Windows are drawn from many (so that a batch holds several), a
// window's end is now and then not its start plus 10 s (the layout's
// derived end broken), order is random in some batches, nulls at every
// level when nullable, and the arrays are sliced by off.
func runKeys(mem memory.Allocator, rng *rand.Rand, n, off, shape int, shuffled, nullable bool) []arrow.Array {
	type row struct {
		start, end int64
		key        int64
		null       [4]bool // struct, start, key, first leaf of shape 2
	}
	rows := make([]row, 0, n+off)
	for len(rows) < n+off {
		var r row
		r.start = int64(rng.IntN(40)) * 10_000_000
		r.end = r.start + 10_000_000
		if rng.IntN(50) == 0 {
			r.end += 10_000_000
		}
		r.key = int64(rng.IntN(5) - 2)
		if nullable {
			for i := range r.null {
				r.null[i] = rng.IntN(9) == 0
			}
		}
		run := 1 + rng.IntN([]int{3, 40, 600}[rng.IntN(3)])
		for range min(run, n+off-len(rows)) {
			rows = append(rows, r)
		}
	}
	if shuffled {
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	}
	var cols []arrow.Array
	switch shape {
	case 0, 1:
		sb := array.NewStructBuilder(mem, windowKeyType)
		st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
		kb := array.NewInt32Builder(mem)
		for _, r := range rows {
			if r.null[0] {
				sb.AppendNull()
			} else {
				sb.Append(true)
				if r.null[1] {
					st.AppendNull()
				} else {
					st.Append(arrow.Timestamp(r.start))
				}
				en.Append(arrow.Timestamp(r.end))
			}
			if r.null[2] {
				kb.AppendNull()
			} else {
				kb.Append(int32(r.key))
			}
		}
		cols = []arrow.Array{sb.NewArray()}
		k := kb.NewArray()
		if shape == 1 {
			cols = append(cols, k)
		} else {
			k.Release()
		}
		sb.Release()
		kb.Release()
	default:
		ab, bb := array.NewInt64Builder(mem), array.NewInt16Builder(mem)
		for _, r := range rows {
			if r.null[3] {
				ab.AppendNull()
			} else {
				ab.Append(r.start)
			}
			if r.null[2] {
				bb.AppendNull()
			} else {
				bb.Append(int16(r.key))
			}
		}
		cols = []arrow.Array{ab.NewArray(), bb.NewArray()}
		ab.Release()
		bb.Release()
	}
	for i, c := range cols {
		cols[i] = array.NewSlice(c, int64(off), int64(off+n))
		c.Release()
	}
	return cols
}

// TestWordsGrouperRunsMatchGeneric: batches whose keys come in runs,
// grouped by the run-length path, give the groups (ids, numbering, row
// counts, rebuilt keys) of the words grouper's generic path and of the
// general key-bytes grouper, over random orders, nulls, many windows a
// batch, broken derived words, and tables emptied or kept in part between
// batches (the layout learned again from a run batch).
func TestWordsGrouperRunsMatchGeneric(t *testing.T) {
	var runBatches, batches int
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 23))
			shape, nullable := int(seed%3), seed%5 == 4
			first := runKeys(mem, rng, 1, 0, shape, false, false)
			types := make([]arrow.DataType, len(first))
			for i, c := range first {
				types[i] = c.DataType()
			}
			releaseArrays(first)
			runs, generic := newWordsGrouper(types), newWordsGrouper(types)
			if runs == nil {
				t.Fatalf("no words grouper for %v", types)
			}
			generic.noRuns = true
			enc, err := NewKeyEncoder(mem, types)
			if err != nil {
				t.Fatal(err)
			}
			bg := &bytesGrouper{t: newBytesTable(), enc: enc}
			defer bg.release()
			for batch := range 12 {
				if batch > 0 && rng.IntN(4) == 0 {
					// An emptied table: the next batch teaches the layout.
					runs.resetGroups()
					generic.resetGroups()
					bg.release()
					bg.t = newBytesTable()
				}
				n := 1 + rng.IntN([]int{100, 3 * wordsProbeChunk, 10_000}[batch%3])
				keys := runKeys(mem, rng, n, rng.IntN(4), shape, rng.IntN(4) == 0, nullable && rng.IntN(2) == 0)
				want, got, gen := make([]int32, n), make([]int32, n), make([]int32, n)
				if err := bg.enc.Encode(keys); err != nil {
					t.Fatal(err)
				}
				bg.t.probe(bg.enc, want)
				before := runs.runBatches
				if err := runs.group(keys, got); err != nil {
					t.Fatal(err)
				}
				if err := generic.group(keys, gen); err != nil {
					t.Fatal(err)
				}
				batches++
				if runs.runBatches > before {
					runBatches++
				}
				for i := range want {
					if want[i] != got[i] || gen[i] != got[i] {
						t.Fatalf("batch %d row %d: group %d, the generic path says %d, the bytes grouper %d", batch, i, got[i], gen[i], want[i])
					}
				}
				releaseArrays(keys)
				if runs.k != generic.k || !slices.Equal(runs.rel, generic.rel) {
					t.Fatalf("batch %d: layout %d %v, the generic path's %d %v", batch, runs.k, runs.rel, generic.k, generic.rel)
				}
			}
			if runs.numGroups() != bg.numGroups() {
				t.Fatalf("%d groups, want %d", runs.numGroups(), bg.numGroups())
			}
			wantRows := make([]int64, bg.numGroups())
			bg.t.rowCounts(wantRows)
			if got, want := fmt.Sprint(runs.finish()), fmt.Sprint(wantRows); got != want {
				t.Fatalf("rows by group %s, want %s", got, want)
			}
			gids := make([]int32, runs.numGroups())
			for i := range gids {
				gids[i] = int32(i)
			}
			rebuilt, err := runs.keysOf(mem, gids)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseArrays(rebuilt)
			if err := enc.Encode(rebuilt); err != nil {
				t.Fatal(err)
			}
			for i := range gids {
				if got, want := string(enc.Key(i)), string(bg.t.key(i)); got != want {
					t.Fatalf("group %d rebuilt as %x, want %x", i, got, want)
				}
			}
		})
	}
	// The run path must have been exercised, and not taken everywhere.
	if runBatches < batches/4 || runBatches == batches {
		t.Fatalf("the run path grouped %d of %d batches", runBatches, batches)
	}
	t.Logf("the run path grouped %d of %d batches", runBatches, batches)
}
