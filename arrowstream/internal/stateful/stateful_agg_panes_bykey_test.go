package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestCombineByEndMatchesByWindow: combining pane groups into windows by
// window end and the other keys gives the rows the general combination
// (by all keys, the window one of them) gives, for random pane states,
// windows emitted per epoch (one end, several, a row given several
// windows, rows left out) and both key orders; and it is the path taken
// when the window has another key beside it.
func TestCombineByEndMatchesByWindow(t *testing.T) {
	const width, slide = 10, 2 // µs
	for _, timeKey := range []int{0, 1} {
		for seed := range uint64(30) {
			t.Run(fmt.Sprintf("timeKey=%d/seed=%d", timeKey, seed), func(t *testing.T) {
				mem := poisonmem.New()
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(seed, 7))
				input := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}, {Name: "w", Type: vector.WindowType}}, nil)
				keys := []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("w"), "w")}
				if timeKey == 0 {
					keys[0], keys[1] = keys[1], keys[0]
				}
				spec := vector.AggregateSpec{GroupBy: keys, Aggregates: []vector.AggregateCall{
					{Func: vector.AggCountStar, Name: "n"},
					{Func: vector.AggMax, Args: []vector.Expr{vector.Col("k")}, Name: "hi"},
				}}
				op, err := newStatefulAggregate(mem, 0, input, spec, stream.Append, timeKey)
				if err != nil {
					t.Fatal(err)
				}
				op.panes = &paneMode{width: width, slide: slide}
				live, err := vector.NewLiveAggregate(mem, op.partialSchema, op.nKeys, op.spec.Aggregates)
				if err != nil {
					t.Fatal(err)
				}
				op.live = newAggLive(live)
				defer op.live.close()

				st := paneStates(t, op, rng)
				defer st.Release()
				starts, _, _ := windowBounds(st.Column(timeKey))
				// The windows emitted: ends in (lo, hi], one slide or more.
				lo := int64(rng.IntN(8)) * slide
				hi := lo + int64(1+rng.IntN(3))*slide
				var take []int32
				var wStarts, wEnds []arrow.Timestamp
				for i := range int(st.NumRows()) {
					p := int64(starts[i])
					for e := p + slide; e <= p+width; e += slide {
						if e > lo && e <= hi {
							take = append(take, int32(i))
							wStarts, wEnds = append(wStarts, arrow.Timestamp(e-width)), append(wEnds, arrow.Timestamp(e))
						}
					}
				}
				if len(take) == 0 {
					t.Skip("no window emitted")
				}
				want, err := op.combineByWindow(ctx, st, take, wStarts, wEnds)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Release()
				got, ok, err := op.combineByEnd(ctx, st, take, wEnds)
				if err != nil || !ok {
					t.Fatalf("combineByEnd: ok %v, %v", ok, err)
				}
				defer got.Release()
				if !got.Schema().Equal(op.partialSchema) {
					t.Fatalf("schema %s, want %s", got.Schema(), op.partialSchema)
				}
				if w, g := vt.SortRows(vt.RowsOf(want)), vt.SortRows(vt.RowsOf(got)); !vt.RowsEqual(w, g) {
					t.Fatalf("(lo, hi] = (%d, %d]: by end\n%swant (by window)\n%s", lo, hi, vt.FormatRows(g), vt.FormatRows(w))
				}
			})
		}
	}
}

// paneStates is a random partial-layout state of op: one row per key and
// pane [p, p+slide), with a count and a max.
func paneStates(t *testing.T, op *statefulAggregate, rng *rand.Rand) arrow.Record {
	t.Helper()
	b := array.NewRecordBuilder(op.mem, op.partialSchema)
	defer b.Release()
	seen := map[[2]int64]bool{}
	for range 1 + rng.IntN(60) {
		k, p := int64(rng.IntN(6)), int64(rng.IntN(12))*op.panes.slide
		if seen[[2]int64{k, p}] {
			continue
		}
		seen[[2]int64{k, p}] = true
		for i, f := range op.partialSchema.Fields() {
			switch {
			case i == op.timeKey:
				w := b.Field(i).(*array.StructBuilder)
				w.Append(true)
				w.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(p))
				w.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(p + op.panes.slide))
			case f.Name == "k" || i < op.nKeys:
				b.Field(i).(*array.Int64Builder).Append(k)
			default:
				ib, ok := b.Field(i).(*array.Int64Builder)
				if !ok {
					t.Fatalf("partial state column %s is %s, the test builds int64 only", f.Name, f.Type)
				}
				ib.Append(1 + rng.Int64N(9))
			}
		}
	}
	return b.NewRecord()
}

// BenchmarkCombinePanes combines the panes of one window end (5 panes of
// 4000 keys each, count and max) by window end and by window:
//
//	go test -run '^$' -bench CombinePanes ./arrowstream/internal/stateful/
func BenchmarkCombinePanes(b *testing.B) {
	const width, slide, keys = 10, 2, 4000
	mem := memory.NewGoAllocator()
	input := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}, {Name: "w", Type: vector.WindowType}}, nil)
	spec := vector.AggregateSpec{GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("w"), "w")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}, {Func: vector.AggMax, Args: []vector.Expr{vector.Col("k")}, Name: "hi"}}}
	op, err := newStatefulAggregate(mem, 0, input, spec, stream.Append, 1)
	if err != nil {
		b.Fatal(err)
	}
	op.panes = &paneMode{width: width, slide: slide}
	live, err := vector.NewLiveAggregate(mem, op.partialSchema, op.nKeys, op.spec.Aggregates)
	if err != nil {
		b.Fatal(err)
	}
	op.live = newAggLive(live)
	defer op.live.close()
	rb := array.NewRecordBuilder(mem, op.partialSchema)
	defer rb.Release()
	var take []int32
	var starts, ends []arrow.Timestamp
	for p := int64(0); p < width; p += slide {
		for k := range int64(keys) {
			rb.Field(0).(*array.Int64Builder).Append(k * 7919 % 100003)
			w := rb.Field(1).(*array.StructBuilder)
			w.Append(true)
			w.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(p))
			w.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(p + slide))
			rb.Field(2).(*array.Int64Builder).Append(1 + k%5)
			rb.Field(3).(*array.Int64Builder).Append(k)
			take = append(take, int32(len(take)))
			starts, ends = append(starts, 0), append(ends, width)
		}
	}
	st := rb.NewRecord()
	defer st.Release()
	ctx := context.Background()
	b.Run("byEnd", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			out, ok, err := op.combineByEnd(ctx, st, take, ends)
			if err != nil || !ok {
				b.Fatal(ok, err)
			}
			out.Release()
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/float64(len(take)), "cpu-ns/row")
	})
	b.Run("byWindow", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			out, err := op.combineByWindow(ctx, st, take, starts, ends)
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/float64(len(take)), "cpu-ns/row")
	})
}
