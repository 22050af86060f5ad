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
