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
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestEvictBySlotMatchesByWindow: emitting sliding windows from panes
// combined by slot (each open pane's keys read once, folded by its kept
// slot) gives, epoch after epoch, the rows the general path gives (the open panes' state read whole and combined by keys and
// window) — for random rows into panes not yet late (open panes updated
// between their windows included), null keys, watermarks that move by
// less than a slide, one slide or several, the slot table rebuilt often,
// the scratch dropped between epochs (the open panes slotted again) and
// the state compacted (open groups renumbered); both key orders.
func TestEvictBySlotMatchesByWindow(t *testing.T) {
	const width, slide = 10_000, 2_000 // µs
	for _, timeKey := range []int{0, 1} {
		for seed := range uint64(40) {
			t.Run(fmt.Sprintf("timeKey=%d/seed=%d", timeKey, seed), func(t *testing.T) {
				mem := poisonmem.New()
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(seed, 11))
				bySlot := paneOp(t, mem, timeKey, width, slide)
				defer bySlot.live.close()
				bySlot.live.panes.slots.floor = 1 + rng.IntN(8)
				byWindow := paneOp(t, mem, timeKey, width, slide)
				defer byWindow.live.close()
				byWindow.live.panes.noByKey = true // the general path
				var wm int64                       // ms
				emitted := 0
				for epoch := range 40 {
					rec := paneRows(t, bySlot, rng, wm*1000, int64(epoch))
					for _, op := range []*statefulAggregate{bySlot, byWindow} {
						op.live.beginEpoch()
						times, valid := op.keyTimes(rec)
						if err := op.live.merge(ctx, rec, times, valid); err != nil {
							t.Fatal(err)
						}
					}
					rec.Release()
					late := wm
					wm += int64(rng.IntN(7)) // ms: a slide is 2
					got, err := bySlot.evictPanes(ctx, late, wm)
					if err != nil {
						t.Fatal(err)
					}
					want, err := byWindow.evictPanes(ctx, late, wm)
					if err != nil {
						t.Fatal(err)
					}
					if got != nil && !got.Schema().Equal(bySlot.partialSchema) {
						t.Errorf("schema %s, want %s", got.Schema(), bySlot.partialSchema)
					}
					g, w := rowsOrNone(got), rowsOrNone(want)
					for _, r := range []arrow.Record{got, want} {
						if r != nil {
							r.Release()
						}
					}
					if !vt.RowsEqual(w, g) {
						t.Fatalf("epoch %d, watermark (%d, %d] ms: by slot\n%swant (by window)\n%s", epoch, late, wm, vt.FormatRows(g), vt.FormatRows(w))
					}
					emitted += len(g)
					if len(bySlot.live.open) != len(byWindow.live.open) || bySlot.live.agg.NumLive() != byWindow.live.agg.NumLive() {
						t.Fatalf("epoch %d: %d open panes and %d groups by slot, %d and %d by window", epoch,
							len(bySlot.live.open), bySlot.live.agg.NumLive(), len(byWindow.live.open), byWindow.live.agg.NumLive())
					}
					if rng.IntN(6) == 0 {
						bySlot.live.dropPaneScratch()
					}
					for _, op := range []*statefulAggregate{bySlot, byWindow} {
						if err := op.live.compact(ctx); err != nil {
							t.Fatal(err)
						}
					}
				}
				if emitted == 0 {
					t.Fatal("no window emitted")
				}
			})
		}
	}
}

// paneOp is an Append-mode aggregation of count(*) and max(k) by k and a
// sliding window (time key timeKey) over panes, with an empty live state.
func paneOp(t *testing.T, mem memory.Allocator, timeKey int, width, slide int64) *statefulAggregate {
	t.Helper()
	input := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}, {Name: "w", Type: vector.WindowType}}, nil)
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
	op.state.stores = []checkpoint.StateStore{deleteSink{}}
	return op
}

// deleteSink is a state store that takes deletes (removeGroups' only use
// of the stores here) and nothing else.
type deleteSink struct{ checkpoint.StateStore }

func (deleteSink) Delete([]byte) error { return nil }

// paneRows is a batch of partial rows of op for panes not late at the
// late watermark lateUs (their last window ends after it), from a pane
// whose windows are partly emitted to a few slides ahead; keys base to
// base+9 (keys drift as epochs go, leaving stale slots) and null, a
// count and a max (null when the key is).
func paneRows(t *testing.T, op *statefulAggregate, rng *rand.Rand, lateUs, base int64) arrow.Record {
	t.Helper()
	b := array.NewRecordBuilder(op.mem, op.partialSchema)
	defer b.Release()
	slide, width := op.panes.slide, op.panes.width
	first := (lateUs-width)/slide*slide + slide // the first pane not late
	if first < 0 {
		first = 0
	}
	for range rng.IntN(40) {
		k := base + int64(rng.IntN(11))
		p := first + int64(rng.IntN(8))*slide
		for i := range op.partialSchema.Fields() {
			switch {
			case i == op.timeKey:
				w := b.Field(i).(*array.StructBuilder)
				w.Append(true)
				w.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(p))
				w.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(p + slide))
			case i < op.nKeys || i == op.nKeys+1: // k, and max(k)
				if k == base+10 {
					b.Field(i).AppendNull()
				} else {
					b.Field(i).(*array.Int64Builder).Append(k)
				}
			default:
				b.Field(i).(*array.Int64Builder).Append(1 + rng.Int64N(3))
			}
		}
	}
	return b.NewRecord()
}

// rowsOrNone is the rows of rec sorted (the paths order windows
// differently), none for nil.
func rowsOrNone(rec arrow.Record) []vt.Row {
	if rec == nil {
		return nil
	}
	return vt.SortRows(vt.RowsOf(rec))
}
