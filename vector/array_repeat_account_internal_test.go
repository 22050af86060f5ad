package vector

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// evalRepeat evaluates array_repeat(col, n) over rows of (s, n) on mem.
func evalRepeat(mem memory.Allocator, elem string, s []string, n []int64) (arrow.Array, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: String}, {Name: "n", Type: Int64}}, nil)
	sb, nb := array.NewStringBuilder(mem), array.NewInt64Builder(mem)
	defer sb.Release()
	defer nb.Release()
	sb.AppendValues(s, nil)
	nb.AppendValues(n, nil)
	cols := []arrow.Array{sb.NewArray(), nb.NewArray()}
	rec := array.NewRecord(schema, cols, int64(len(s)))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	f, err := LookupFunction("array_repeat", []Expr{Col(elem), Col("n")})
	if err != nil {
		return nil, err
	}
	ev, err := f.Bind(schema, mem)
	if err != nil {
		return nil, err
	}
	return ev.Eval(context.Background(), rec)
}

// TestArrayRepeatAccounted: array_repeat's output is as large as its count
// says, whatever its input (two literals can ask for 10^8 elements), so
// its element indices (Go heap) and its elements (Arrow buffers) are
// checked against the query's account before either is made. Under a
// 4 MiB limit, 10^8 integers, 2·10^7 strings and 10^8 elements over 1,000
// rows are refused with the limit's error naming array_repeat, without
// the Go heap or the allocator going far past the limit (before: 400 MB
// of indices were made, then the elements' buffer was granted to the
// allocator's panic at twice the limit, 12 s and +800 MB RSS through the
// server). Under an ample limit the same kernel builds the right arrays.
func TestArrayRepeatAccounted(t *testing.T) {
	const limit = 4 << 20
	many := func(k int, v int64) []int64 {
		out := make([]int64, k)
		for i := range out {
			out[i] = v
		}
		return out
	}
	strs := func(k int, v string) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = v
		}
		return out
	}
	for _, c := range []struct {
		name, elem string
		s          []string
		n          []int64
	}{
		{"10^8 integers", "n", []string{"x"}, []int64{100_000_000}},
		{"2*10^7 strings", "s", []string{"xy"}, []int64{20_000_000}},
		{"10^8 elements over 1000 rows", "n", strs(1000, "x"), many(1000, 100_000)},
		{"one large string repeated", "s", []string{strings.Repeat("z", 1<<20)}, []int64{64}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := newPeakAlloc(limit)
			before := heapAllocated()
			arr, err := evalRepeat(mem, c.elem, c.s, c.n)
			took := heapAllocated() - before
			if err == nil {
				arr.Release()
				t.Fatal("built under the limit")
			}
			if !errors.Is(err, errTestLimit) || !strings.Contains(err.Error(), "array_repeat: ") {
				t.Fatalf("error %v, want the limit's, naming array_repeat", err)
			}
			if mem.peak > 3*limit {
				t.Errorf("the allocator's peak is %d bytes under a %d-byte limit", mem.peak, limit)
			}
			if !raceEnabled && took > 12*limit {
				t.Errorf("the evaluation took %d bytes of Go heap under a %d-byte limit", took, limit)
			}
			if mem.reserved != 0 {
				t.Errorf("%d bytes still reserved", mem.reserved)
			}
			mem.AssertSize(t, 0)
		})
	}
	// Within the limit: the arrays, and nothing left reserved.
	mem := newPeakAlloc(limit)
	arr, err := evalRepeat(mem, "s", []string{"ab", "c", ""}, []int64{3, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	l := arr.(*array.List)
	var got []string
	for r := range l.Len() {
		lo, hi := l.ValueOffsets(r)
		var vals []string
		for j := lo; j < hi; j++ {
			vals = append(vals, l.ListValues().(*array.String).Value(int(j)))
		}
		got = append(got, strings.Join(vals, "|"))
	}
	arr.Release()
	if strings.Join(got, ";") != "ab|ab|ab;;|" {
		t.Fatalf("array_repeat = %q", got)
	}
	if mem.reserved != 0 {
		t.Errorf("%d bytes still reserved", mem.reserved)
	}
	mem.AssertSize(t, 0)
}
