package stateful

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

var assignSchema = arrow.NewSchema([]arrow.Field{
	{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "g", Type: arrow.FixedWidthTypes.Duration_us, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// newTestAssign binds a sessionAssign over assignSchema's t, with a fixed
// gap or (perRow) the gap column g, reading recs.
func newTestAssign(t testing.TB, mem memory.Allocator, gap int64, perRow bool, recs ...arrow.Record) *sessionAssign {
	t.Helper()
	ev, err := vector.Col("t").Bind(assignSchema, mem)
	if err != nil {
		t.Fatal(err)
	}
	scan, err := vector.NewScan(assignSchema, recs...)
	if err != nil {
		t.Fatal(err)
	}
	out := arrow.Field{Name: "session", Type: vector.WindowType}
	sa := &sessionAssign{mem: mem, input: scan, time: ev, gap: gap,
		schema: arrow.NewSchema(append(append([]arrow.Field(nil), assignSchema.Fields()...), out), nil)}
	if perRow {
		if sa.gapExpr, err = vector.Col("g").Bind(assignSchema, mem); err != nil {
			t.Fatal(err)
		}
	}
	return sa
}

// assignRecord builds n rows with times (some null when nulls) and gaps
// (some null, zero or negative when nulls); x numbers the rows.
func assignRecord(mem memory.Allocator, rng *rand.Rand, n int, nulls bool) arrow.Record {
	tb := array.NewTimestampBuilder(mem, assignSchema.Field(0).Type.(*arrow.TimestampType))
	defer tb.Release()
	gb := array.NewDurationBuilder(mem, arrow.FixedWidthTypes.Duration_us.(*arrow.DurationType))
	defer gb.Release()
	xb := array.NewInt64Builder(mem)
	defer xb.Release()
	for i := range n {
		if nulls && rng.IntN(5) == 0 {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(rng.Int64N(1e12)))
		}
		switch {
		case nulls && rng.IntN(6) == 0:
			gb.AppendNull()
		case nulls && rng.IntN(6) == 0:
			gb.Append(arrow.Duration(-rng.Int64N(3)))
		default:
			gb.Append(arrow.Duration(1 + rng.Int64N(1e7)))
		}
		xb.Append(int64(i))
	}
	t, g, x := tb.NewArray(), gb.NewArray(), xb.NewArray()
	defer t.Release()
	defer g.Release()
	defer x.Release()
	return array.NewRecord(assignSchema, []arrow.Array{t, g, x}, int64(n))
}

// TestSessionAssignMatchesModel checks each row's session against the
// row-by-row rule: [t, t+gap) with the fixed gap or the row's own, rows
// with a null time or a null or non-positive gap dropped, the other
// columns carried along; over batches with and without nulls, sliced
// ones (an offset into the time column) included.
func TestSessionAssignMatchesModel(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 40 {
		mem := poisonmem.New()
		perRow, nulls := trial%2 == 1, trial%4 >= 2
		const gap = 5_000_000
		var recs []arrow.Record
		for range 1 + rng.IntN(3) {
			rec := assignRecord(mem, rng, rng.IntN(300), nulls)
			if rec.NumRows() > 10 && rng.IntN(2) == 0 {
				sl := rec.NewSlice(3, rec.NumRows()-2)
				rec.Release()
				rec = sl
			}
			recs = append(recs, rec)
		}
		type row struct{ x, start, end int64 }
		var want []row
		for _, rec := range recs {
			ts := rec.Column(0).(*array.Timestamp)
			gs := rec.Column(1).(*array.Duration)
			xs := rec.Column(2).(*array.Int64)
			for i := range int(rec.NumRows()) {
				g := int64(gap)
				if perRow {
					if gs.IsNull(i) || gs.Value(i) <= 0 {
						continue
					}
					g = int64(gs.Value(i))
				}
				if ts.IsNull(i) {
					continue
				}
				want = append(want, row{xs.Value(i), int64(ts.Value(i)), int64(ts.Value(i)) + g})
			}
		}
		sa := newTestAssign(t, mem, gap, perRow, recs...)
		for _, rec := range recs {
			rec.Release()
		}
		var got []row
		for {
			out, err := sa.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			xs := out.Column(2).(*array.Int64)
			win := out.Column(3).(*array.Struct)
			st, en := win.Field(0).(*array.Timestamp), win.Field(1).(*array.Timestamp)
			for i := range int(out.NumRows()) {
				if win.IsNull(i) {
					t.Fatalf("trial %d: a null session", trial)
				}
				got = append(got, row{xs.Value(i), int64(st.Value(i)), int64(en.Value(i))})
			}
			out.Release()
		}
		sa.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (per-row gap %v, nulls %v):\ngot  %v\nwant %v", trial, perRow, nulls, got, want)
		}
		mem.AssertSize(t, 0)
	}
}

// BenchmarkSessionAssign measures the session assignment of 10K rows
// with a fixed gap (CPU ns per row).
func BenchmarkSessionAssign(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	rec := assignRecord(mem, rand.New(rand.NewPCG(1, 2)), 10_000, false)
	defer rec.Release()
	recs := make([]arrow.Record, 16)
	for i := range recs {
		recs[i] = rec
	}
	b.ResetTimer()
	for range b.N {
		sa := newTestAssign(b, mem, 10_000_000, false, recs...)
		for {
			out, err := sa.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		sa.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)*int(rec.NumRows())), "ns/row")
}
