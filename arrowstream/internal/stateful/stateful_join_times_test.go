package stateful

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestTimesOfMatchesTimeAt: the column-at-once reading of event times
// agrees with timeAt row by row for timestamp columns and window structs,
// with nulls at either level, sliced, and for a column of another type.
func TestTimesOfMatchesTimeAt(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(5))
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	win := arrow.StructOf(arrow.Field{Name: "start", Type: ts, Nullable: true}, arrow.Field{Name: "end", Type: ts, Nullable: true})
	for trial := 0; trial < 50; trial++ {
		n := 1 + rng.Intn(60)
		nulls := rng.Intn(3) > 0
		tb := array.NewTimestampBuilder(mem, ts)
		sb := array.NewStructBuilder(mem, win)
		ib := array.NewInt64Builder(mem)
		for i := 0; i < n; i++ {
			v := arrow.Timestamp(rng.Int63n(1e9))
			if nulls && rng.Intn(4) == 0 {
				tb.AppendNull()
			} else {
				tb.Append(v)
			}
			switch {
			case nulls && rng.Intn(5) == 0:
				sb.AppendNull()
			default:
				sb.Append(true)
				sb.FieldBuilder(0).(*array.TimestampBuilder).Append(v - 10)
				if nulls && rng.Intn(5) == 0 {
					sb.FieldBuilder(1).(*array.TimestampBuilder).AppendNull()
				} else {
					sb.FieldBuilder(1).(*array.TimestampBuilder).Append(v)
				}
			}
			ib.Append(int64(v))
		}
		cols := []arrow.Array{tb.NewArray(), sb.NewArray(), ib.NewArray()}
		tb.Release()
		sb.Release()
		ib.Release()
		lo := rng.Intn(n)
		hi := lo + rng.Intn(n-lo+1)
		for _, c := range cols {
			for _, a := range []arrow.Array{c, array.NewSlice(c, int64(lo), int64(hi))} {
				got := timesOf(a)
				for i := 0; i < a.Len(); i++ {
					wt, wok := timeAt(a, i)
					gt, gok := got.at(i)
					if wok != gok || (wok && wt != gt) {
						t.Fatalf("trial %d %s row %d of %d: timesOf (%d, %v), timeAt (%d, %v)", trial, a.DataType(), i, a.Len(), gt, gok, wt, wok)
					}
				}
				if a != c {
					a.Release()
				}
			}
			c.Release()
		}
	}
}

// TestNoneLateMatchesRows checks the join's no-late-row pre-check against
// the row-by-row late filter's rule (a row is late when it has a time at
// or before the late watermark): sliced columns, a row exactly at the
// watermark, rows with no time (which make the check give way to the
// row-by-row filter).
func TestNoneLateMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 1000; iter++ {
		n := 1 + r.Intn(200)
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond})
		nulls := iter%5 == 0
		for i := 0; i < n; i++ {
			if nulls && r.Intn(10) == 0 {
				b.AppendNull()
				continue
			}
			b.Append(arrow.Timestamp(r.Int63n(1000)))
		}
		whole := b.NewArray()
		b.Release()
		lo := r.Intn(n)
		hi := lo + 1 + r.Intn(n-lo)
		sl := array.NewSlice(whole, int64(lo), int64(hi))
		ts := sl.(*array.Timestamp)
		late := int64(r.Intn(40)) - 1
		if iter%4 == 0 && ts.IsValid(0) {
			late = int64(ts.Value(0)) // a row exactly at the watermark
		}
		want := sl.NullN() == 0
		for i := 0; i < sl.Len(); i++ {
			if ts.IsValid(i) && int64(ts.Value(i)) <= late {
				want = false
			}
		}
		if got := noneLate(sl, late); got != want {
			t.Fatalf("iter %d: rows %d..%d, late %d: noneLate %v, want %v", iter, lo, hi, late, got, want)
		}
		sl.Release()
		whole.Release()
	}
	if noneLate(nil, 0) {
		t.Error("noneLate of no column: true")
	}
}
