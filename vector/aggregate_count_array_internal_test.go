package vector

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestCountArrayMatchesRows checks the count state that countArray
// writes into its Arrow buffer: a group's rows less its null rows when
// folding raw rows, the kept counts when merging states, in gids' order
// with repeats.
func TestCountArrayMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rows := []int64{3, 4, 5, 0}
	counts := []int64{7, 8, 9, 10}
	gids := []int32{2, 0, 2, 3, 1}
	cases := []struct {
		name  string
		c     nullCounter
		merge bool
		want  []int64
	}{
		{"raw, no nulls", nullCounter{}, false, []int64{5, 3, 5, 0, 4}},
		{"raw, nulls", nullCounter{nulls: []int64{1, 4, 2, 0}}, false, []int64{3, 2, 3, 0, 0}},
		{"merge", nullCounter{nulls: []int64{1, 4, 2, 0}}, true, []int64{9, 7, 9, 10, 8}},
	}
	for _, tc := range cases {
		arr := tc.c.countArray(mem, tc.merge, counts, gids, rows)
		got := arr.(*array.Int64)
		if got.Len() != len(tc.want) || got.NullN() != 0 {
			t.Fatalf("%s: %d rows, %d nulls; want %d rows, no nulls", tc.name, got.Len(), got.NullN(), len(tc.want))
		}
		for i, w := range tc.want {
			if got.Value(i) != w {
				t.Errorf("%s: row %d = %d, want %d", tc.name, i, got.Value(i), w)
			}
		}
		arr.Release()
	}
	empty := (&nullCounter{}).countArray(mem, false, counts, nil, rows)
	if empty.Len() != 0 {
		t.Errorf("no groups: %d rows", empty.Len())
	}
	empty.Release()
}
