package engine

import (
	"context"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"testing"
	"time"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// dedupExecutor runs: value → eventTime = timestamp_seconds(value) →
// watermark (10 s) → dropDuplicates[WithinWatermark](all columns).
type dedupExecutor struct {
	funcExecutor
	singleOpState
	mem   memory.Allocator
	dedup stateful.Op
	stats stateful.EventTimeStats
}

func newDedupExecutor(t *testing.T, mem memory.Allocator, within bool) *dedupExecutor {
	t.Helper()
	e := &dedupExecutor{mem: mem}
	schema := e.projected(t)
	d, err := stateful.NewDedup(mem, 0, schema, nil, 1, within, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e.dedup = d
	e.singleOpState = newSingleOpState(mem, d, &checkpoint.Writer{NoSync: true}, nil)
	return e
}

func (e *dedupExecutor) projection() []vector.NamedExpr {
	return []vector.NamedExpr{vector.As(vector.Col("value"), "value"), vector.As(vector.TimestampSeconds(vector.Col("value")), "eventTime")}
}

func (e *dedupExecutor) projected(t *testing.T) *arrow.Schema {
	scan, _ := vector.NewScan(valueSchema)
	p, err := vector.NewProject(e.mem, scan, e.projection())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.Schema()
}

func (e *dedupExecutor) Execute(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
	p, err := vector.NewProject(e.mem, in[0], e.projection())
	if err != nil {
		in[0].Close()
		return nil, err
	}
	wm := stateful.NewEventTimeWatermark(p, 1, 10_000, "w0", &e.stats)
	sep, err := e.epoch(ep)
	if err != nil {
		wm.Close()
		return nil, err
	}
	return e.dedup.Execute(ctx, sep, wm)
}
func (e *dedupExecutor) HasState() bool { return true }
func (e *dedupExecutor) CommitState(ctx context.Context, ep stream.EpochInfo) error {
	return e.singleOpState.CommitState(ctx, ep)
}
func (e *dedupExecutor) AbortState(ep stream.EpochInfo) { e.singleOpState.AbortState(ep) }
func (e *dedupExecutor) Close() error                   { return e.singleOpState.Close() }
func (e *dedupExecutor) WatermarkNodes() []string       { return []string{"w0"} }
func (e *dedupExecutor) EventTimeStats() []stateful.EventTimeStats {
	return []stateful.EventTimeStats{e.stats}
}
func (e *dedupExecutor) ShouldRunAnotherBatch(wm int64) bool {
	return e.dedup.ShouldRunAnotherBatch(wm)
}
func (e *dedupExecutor) StateProgress() []stream.StateOperatorProgress {
	return []stream.StateOperatorProgress{e.dedup.Report()}
}

type dedupStep struct {
	add                     []any
	newAnswer               []any // values
	total, updated, dropped int64
}

func TestStatefulDedupScenarios(t *testing.T) {
	first := []any{}
	for r := 0; r < 5; r++ {
		for v := 10; v <= 15; v++ {
			first = append(first, v)
		}
	}
	cases := []struct {
		name   string
		within bool
		steps  []dedupStep
	}{
		// Spark's dedup_with_watermark: keys include the event time, so
		// entries at or below the watermark are evicted by no-data epochs.
		{"dropDuplicates", false, []dedupStep{
			{first, []any{10, 11, 12, 13, 14, 15}, 6, 6, 0},
			{[]any{25}, []any{25}, 1, 1, 0},
			{[]any{10}, nil, 1, 0, 1},
			{[]any{45}, []any{45}, 1, 1, 0},
		}},
		// Spark's dedup_within_watermark_all_columns: entries expire at
		// eventTime + 10 s.
		{"dropDuplicatesWithinWatermark", true, []dedupStep{
			{first, []any{10, 11, 12, 13, 14, 15}, 6, 6, 0},
			{[]any{13, 14, 15, 16, 17}, []any{16, 17}, 8, 2, 0},
			{[]any{5}, nil, 8, 0, 1},
			{[]any{35}, []any{35}, 3, 1, 0},
			{[]any{55}, []any{55}, 1, 1, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			src := memsource.New(mem, valueSchema)
			defer src.Close()
			sink := &collectsink.Sink{}
			q := startTestQuery(t, t.TempDir(), src, sink, newDedupExecutor(t, mem, c.within), processingTime(0))
			defer q.Stop()
			seen := 0
			reports := 0
			for i, st := range c.steps {
				var rows [][]any
				for _, v := range st.add {
					rows = append(rows, []any{v})
				}
				src.AddData(rows...)
				if err := q.ProcessAllAvailable(ctx); err != nil {
					t.Fatal(err)
				}
				all := sink.All()
				var got []vt.Row
				for _, r := range all[seen:] {
					got = append(got, vt.Row{r[0]})
				}
				seen = len(all)
				var want []vt.Row
				for _, v := range st.newAnswer {
					want = append(want, vt.Row{v})
				}
				if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
					t.Fatalf("step %d: new rows\n%swant\n%s", i, vt.FormatRows(got), vt.FormatRows(want))
				}
				progress := q.RecentProgress()
				var updated, dropped int64
				for _, p := range progress[reports:] {
					if p.NumInputRows == 0 && len(p.StateOperators) == 0 {
						continue
					}
					for _, so := range p.StateOperators {
						updated += so.NumRowsUpdated
						dropped += so.NumRowsDroppedByWatermark
					}
				}
				reports = len(progress)
				last := progress[len(progress)-1].StateOperators
				if len(last) != 1 || last[0].NumRowsTotal != st.total || updated != st.updated || dropped != st.dropped {
					t.Fatalf("step %d: state total %v updated %d dropped %d, want %d %d %d", i, last, updated, dropped, st.total, st.updated, st.dropped)
				}
			}
		})
	}
}
