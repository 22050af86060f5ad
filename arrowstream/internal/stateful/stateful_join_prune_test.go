package stateful

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// pruneTestSchema: a value (nullable int64) and an event time (nullable).
var pruneTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "t", Type: vector.Timestamp, Nullable: true},
}, nil)

// pruneTestRecord builds rows of (value, time µs); a nil pointer is NULL.
func pruneTestRecord(mem memory.Allocator, vals, times []*int64) arrow.Record {
	b := array.NewRecordBuilder(mem, pruneTestSchema)
	defer b.Release()
	for j := range vals {
		if vals[j] == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(*vals[j])
		}
		if times[j] == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(*times[j]))
		}
	}
	return b.NewRecord()
}

// pruneModel is the max bound by its definition, with maps only: the
// running maximum of each window end over the rows of committed epochs
// and of the running one, windows closed by a committed watermark
// forgotten.
type pruneModel struct {
	b        plan.JoinMaxBound
	max      map[int64]int64
	wmClosed int64
}

func (m *pruneModel) ends(t int64) []int64 {
	var out []int64
	for s := t - floorMod(t-m.b.Start, m.b.Slide); s > t-m.b.Width; s -= m.b.Slide {
		out = append(out, s+m.b.Width)
	}
	return out
}

// epoch returns the unstored marks of the rows and the maxima the epoch
// would commit.
func (m *pruneModel) epoch(vals, times []*int64, wm int64) ([]bool, map[int64]int64) {
	cur := maps.Clone(m.max)
	for j := range vals {
		if vals[j] == nil || times[j] == nil {
			continue
		}
		for _, e := range m.ends(*times[j]) {
			if old, ok := cur[e]; !ok || *vals[j] > old {
				cur[e] = *vals[j]
			}
		}
	}
	unstored := make([]bool, len(vals))
	align := floorMod(m.b.Start+m.b.Width, m.b.Slide)
	for j := range vals {
		if vals[j] == nil || times[j] == nil {
			continue
		}
		t, x := *times[j], *vals[j]
		keep := false
		lo := t + m.b.Lo
		for e := lo + floorMod(align-lo, m.b.Slide); e <= t+m.b.Hi; e += m.b.Slide {
			if e <= wm {
				continue
			}
			if mx, ok := cur[e]; !ok || mx <= x {
				keep = true
			}
		}
		unstored[j] = !keep
	}
	for e := range cur {
		if e <= wm {
			delete(cur, e)
		}
	}
	return unstored, cur
}

// TestJoinPruneMatchesModel: the max bound's marks and kept maxima, read
// through its cache of window ends, equal the model's over random epochs:
// tumbling and sliding windows, offsets, ranges, rows mostly in time
// order with stragglers, jumps and rows far ahead (window ends that share
// a cache slot), NULL values and times, negative times,
// aborted epochs, and restarts that seed the maxima from kept rows. Half
// the seeds have no NULLs, so that their epochs take the run paths
// (raiseRuns, markRuns) rather than the per-row loops.
func TestJoinPruneMatchesModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const sec = int64(1_000_000)
	for seed := int64(1); seed <= 24; seed++ {
		rng := rand.New(rand.NewSource(seed))
		width := sec * int64(1+rng.Intn(4))
		slide := width
		if seed%2 == 0 {
			slide = width / int64(1+rng.Intn(4))
		}
		if seed%6 == 0 {
			slide = width * 2 / 5 // rows in two or three windows
		}
		b := plan.JoinMaxBound{Side: 0, ValueCol: 0, WindowTimeCol: 1, RangeCol: 1,
			Width: width, Slide: slide, Start: int64(rng.Intn(3)) * sec / 2,
			Lo: -int64(rng.Intn(3)) * sec, Hi: int64(1+rng.Intn(4)) * sec}
		nulls := seed%4 < 2
		t.Run(fmt.Sprintf("seed%d/width=%d/slide=%d/nulls=%v", seed, width/1000, slide/1000, nulls), func(t *testing.T) {
			p := newJoinPrune(b)
			model := &pruneModel{b: b, max: map[int64]int64{}}
			now := -20 * sec
			for ep := 0; ep < 40; ep++ {
				n := []int{0, 1, 5, 300, 2000}[rng.Intn(5)]
				vals, times := make([]*int64, n), make([]*int64, n)
				for j := 0; j < n; j++ {
					now += int64(rng.Intn(int(sec / 20)))
					if rng.Intn(400) == 0 {
						now += 100 * sec // a jump over many windows
					}
					tm := now
					switch rng.Intn(40) {
					case 0, 1, 2, 3:
						tm -= int64(rng.Intn(int(8 * sec))) // a straggler
					case 4:
						// Far ahead, in the cache slot of a window of now's.
						tm += int64(endCacheSlots*(1+rng.Intn(3))) * slide
					case 5, 6, 7, 8:
						// At a bound of the run paths, ±1 µs, often
						// behind the rows before it: a window's start,
						// or a time whose join range [tm+Lo, tm+Hi]
						// starts or ends at a window end, near now.
						s := now - floorMod(now-b.Start, slide)
						edge := s + []int64{0, width, width - b.Lo, width - b.Hi}[rng.Intn(4)] - int64(rng.Intn(3))*slide
						tm = edge + int64(rng.Intn(3)-1)
					}
					v := int64(rng.Intn(60))
					if !nulls || rng.Intn(20) != 0 {
						vals[j] = &v
					}
					if !nulls || rng.Intn(30) != 0 {
						times[j] = &tm
					}
				}
				wm := now - 3*sec
				rec := pruneTestRecord(mem, vals, times)
				r := &sideRows{rec: rec}
				p.mark(r, pruneEpoch(floorDiv(wm, 1000)))
				wmUs := floorDiv(wm, 1000) * 1000
				want, committed := model.epoch(vals, times, wmUs)
				got := r.unstored
				if n == 0 {
					got = []bool{}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("epoch %d: unstored marks differ from the model's\ngot  %v\nwant %v", ep, got, want)
				}
				switch rng.Intn(6) {
				case 0:
					p.abort()
				case 1:
					// A restart: the maxima seeded from the rows kept.
					p.commit()
					model.max = committed
					p = newJoinPrune(b)
					p.max = maps.Clone(committed)
				default:
					p.commit()
					model.max = committed
				}
				if !maps.Equal(p.max, model.max) {
					t.Fatalf("epoch %d: kept maxima %v, model %v", ep, p.max, model.max)
				}
				rec.Release()
			}
		})
	}
}

// TestJoinPruneLooksUpEachWindowOnce: an epoch of 10K rows in time order
// over two windows reads the kept maxima a few times, not per row (the
// cache of window ends; 20,001 lookups without it).
func TestJoinPruneLooksUpEachWindowOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const sec = int64(1_000_000)
	b := plan.JoinMaxBound{ValueCol: 0, WindowTimeCol: 1, RangeCol: 1, Width: 10 * sec, Slide: 10 * sec, Lo: 0, Hi: 10 * sec}
	p := newJoinPrune(b)
	const n = 10_000
	vals, times := make([]*int64, n), make([]*int64, n)
	for j := range vals {
		v, tm := int64(j*7919%1000), int64(j)*2000 // 20 s: two windows
		vals[j], times[j] = &v, &tm
	}
	rec := pruneTestRecord(mem, vals, times)
	defer rec.Release()
	r := &sideRows{rec: rec}
	p.mark(r, pruneEpoch(0))
	if p.skipped == 0 || p.skipped == n {
		t.Fatalf("%d of %d rows not stored: the test should prune some", p.skipped, n)
	}
	if p.lookups > 16 {
		t.Fatalf("%d lookups of the kept maxima for %d rows over 2 windows, want a few", p.lookups, n)
	}
}

// TestJoinPruneTakesRowsByRuns: an epoch of 10K rows without NULLs in
// time order over two tumbling windows is raised and marked in a few runs
// (one per window and per join range; 10,000 each row by row), with the
// model's marks.
func TestJoinPruneTakesRowsByRuns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const sec = int64(1_000_000)
	b := plan.JoinMaxBound{ValueCol: 0, WindowTimeCol: 1, RangeCol: 1, Width: 10 * sec, Slide: 10 * sec, Lo: 1000, Hi: 10*sec + 1000}
	p := newJoinPrune(b)
	model := &pruneModel{b: b, max: map[int64]int64{}}
	const n = 10_000
	vals, times := make([]*int64, n), make([]*int64, n)
	for j := range vals {
		v, tm := int64(j*7919%1000), int64(j)*2000 // 20 s: two windows
		vals[j], times[j] = &v, &tm
	}
	rec := pruneTestRecord(mem, vals, times)
	defer rec.Release()
	r := &sideRows{rec: rec}
	p.mark(r, pruneEpoch(0))
	want, _ := model.epoch(vals, times, 0)
	if !slices.Equal(r.unstored, want) {
		t.Fatalf("unstored marks differ from the model's")
	}
	if p.skipped == 0 || p.skipped == n {
		t.Fatalf("%d of %d rows not stored: the test should prune some", p.skipped, n)
	}
	if p.runs > 8 {
		t.Fatalf("%d runs for %d rows in time order over 2 windows, want a few", p.runs, n)
	}
}

// pruneEpoch is an epoch with watermark wmMs.
func pruneEpoch(wmMs int64) Epoch {
	var ep Epoch
	ep.HasWatermark, ep.WatermarkMs = true, wmMs
	return ep
}

// BenchmarkJoinPruneMark: the max bound over an epoch of 10K rows in time
// order across two 10 s windows (Nexmark q7's bid side):
//
//	go test -run '^$' -bench JoinPruneMark -benchmem ./arrowstream/internal/stateful/
func BenchmarkJoinPruneMark(b *testing.B) {
	mem := memory.NewGoAllocator()
	const sec = int64(1_000_000)
	bound := plan.JoinMaxBound{ValueCol: 0, WindowTimeCol: 1, RangeCol: 1, Width: 10 * sec, Slide: 10 * sec, Lo: -10 * sec, Hi: 0}
	const n = 10_000
	vals, times := make([]*int64, n), make([]*int64, n)
	for j := range vals {
		v, tm := int64(j*7919%100_000), int64(j)*2000
		vals[j], times[j] = &v, &tm
	}
	rec := pruneTestRecord(mem, vals, times)
	defer rec.Release()
	p := newJoinPrune(bound)
	r := &sideRows{rec: rec}
	for b.Loop() {
		p.mark(r, pruneEpoch(0))
		p.abort()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

// TestJoinPruneReadsInt64InPlace: the bound reads an Int64 value column
// in place (no copy of an epoch's values into its buffer, which is kept
// for narrower columns only and never aliases an array), with the
// model's marks over a sliced record (the values' offset) with and
// without NULLs.
func TestJoinPruneReadsInt64InPlace(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const sec = int64(1_000_000)
	b := plan.JoinMaxBound{ValueCol: 0, WindowTimeCol: 1, RangeCol: 1, Width: 10 * sec, Slide: 10 * sec, Lo: -10 * sec, Hi: 0}
	for _, nulls := range []bool{false, true} {
		const n, off, m = 10_000, 137, 9_000
		vals, times := make([]*int64, n), make([]*int64, n)
		for j := range vals {
			v, tm := int64(j*7919%1000), int64(j)*2000
			vals[j], times[j] = &v, &tm
			if nulls && j%97 == 5 {
				vals[j] = nil
			}
		}
		rec := pruneTestRecord(mem, vals, times)
		sl := rec.NewSlice(off, off+m)
		rec.Release()
		p := newJoinPrune(b)
		model := &pruneModel{b: b, max: map[int64]int64{}}
		r := &sideRows{rec: sl}
		p.mark(r, pruneEpoch(0))
		sl.Release() // the marks are computed; nothing of the record is kept
		want, _ := model.epoch(vals[off:off+m], times[off:off+m], 0)
		if !slices.Equal(r.unstored, want) {
			t.Fatalf("nulls %v: unstored marks differ from the model's", nulls)
		}
		if p.skipped == 0 || p.skipped == m {
			t.Fatalf("nulls %v: %d of %d rows not stored: the test should prune some", nulls, p.skipped, m)
		}
		if cap(p.vals) != 0 {
			t.Fatalf("nulls %v: the bound copied the Int64 values into its buffer (cap %d)", nulls, cap(p.vals))
		}
	}
}
