package vector

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// FuzzListAggregates feeds doubles decoded from the input (NaN, -0.0 and
// extremes included) to collect_set, compared with the Scala HashSet
// model; to mode's lowest-tie form, compared with a brute-force count;
// and to histogram_numeric, checked for its invariants: at most nb bins,
// centres ascending (without NaN), counts summing to the number of values.
func FuzzListAggregates(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(3))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0x80}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, nbByte uint8) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		var vals []float64
		for len(data) >= 2 && len(vals) < 300 {
			var v float64
			if data[0]&1 == 0 || len(data) < 8 {
				v = float64(int8(data[1])) / 2 // small values: repeats
				data = data[2:]
			} else {
				v = math.Float64frombits(binary.LittleEndian.Uint64(data))
				data = data[8:]
			}
			vals = append(vals, v)
		}
		b := array.NewFloat64Builder(mem)
		b.AppendValues(vals, nil)
		col := b.NewArray()
		defer col.Release()
		gids := make([]int32, len(vals))

		// collect_set against the model.
		window, partial := newScalaSet(), newScalaSet()
		for i, v := range vals {
			key := fmt.Sprint(v)
			if v == 0 {
				key = "0"
			}
			if v != v {
				key = fmt.Sprint("NaN", i)
			}
			nd := scalaNode{key, improveHash(scalaDoubleHash(v)), v}
			window.add(nd)
			partial.add(nd)
		}
		grouped := newScalaSet()
		grouped.addAll(partial)
		for _, m := range []struct {
			window bool
			want   *scalaSet
		}{{true, window}, {false, grouped}} {
			acc, err := bindCollectSet(Float64, false)
			if err != nil {
				t.Fatal(err)
			}
			acc.window = m.window
			acc.resize(1)
			if err := acc.update(gids, []arrow.Array{col}); err != nil {
				t.Fatal(err)
			}
			out, err := acc.final(mem, 0, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Clone(out.(*array.List).ListValues().(*array.Float64).Float64Values())
			out.Release()
			var want []float64
			for _, nd := range m.want.items() {
				want = append(want, nd.val.(float64))
			}
			if len(got) != len(want) {
				t.Fatalf("window=%v: got %v, want %v", m.window, got, want)
			}
			for i := range got {
				same := got[i] == want[i] || got[i] != got[i] && want[i] != want[i]
				if !same {
					t.Fatalf("window=%v: got %v, want %v", m.window, got, want)
				}
			}
		}

		// mode, lowest on ties.
		acc, err := bindMode(Float64, -1, false)
		if err != nil {
			t.Fatal(err)
		}
		acc.resize(1)
		if err := acc.update(gids, []arrow.Array{col}); err != nil {
			t.Fatal(err)
		}
		out, err := acc.final(mem, 0, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := out.(*array.Float64)
		if len(vals) == 0 {
			if res.IsValid(0) {
				t.Fatalf("mode of nothing: %v", res.Value(0))
			}
		} else {
			counts := map[uint64]int{}
			best, bc := 0.0, 0
			for _, v := range vals {
				if v != v {
					if bc == 0 {
						best, bc = v, 1
					}
					continue
				}
				k := math.Float64bits(v)
				counts[k]++
				c := counts[k]
				if c > bc || c == bc && sparkLess(v, best) {
					best, bc = v, c
				}
			}
			got := res.Value(0)
			if math.Float64bits(got) != math.Float64bits(best) && !(got != got && best != best) {
				t.Fatalf("mode: got %v, want %v", got, best)
			}
		}
		out.Release()

		// histogram_numeric's invariants.
		nb := 2 + int(nbByte%20)
		h := newNumericHistogram()
		for _, v := range vals {
			h.add(v, nb)
		}
		if len(h.bins) > nb {
			t.Fatalf("%d bins > %d", len(h.bins), nb)
		}
		// Spark's NumericHistogram.add places a value by a binary search
		// whose comparisons are all false for NaN, so with a NaN among the
		// values the bins are not ordered (in Spark either): the order is
		// checked for NaN-free input only.
		hasNaN := slices.ContainsFunc(vals, math.IsNaN)
		total := 0.0
		for i, bin := range h.bins {
			total += bin.y
			if !hasNaN && i > 0 && h.bins[i-1].x > bin.x {
				t.Fatalf("bins out of order: %v", h.bins)
			}
		}
		if total != float64(len(vals)) {
			t.Fatalf("counts sum to %v, want %d", total, len(vals))
		}
	})
}
