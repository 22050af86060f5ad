package engine

import (
	"context"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"strings"
	"testing"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// aggExecutor runs one statefulAggregate over the single source (the
// shape of SELECT value, count(*) FROM STREAM input GROUP BY value).
type aggExecutor struct {
	funcExecutor
	singleOpState
	agg stateful.Op
}

// newAggExecutor keeps agg's state in prov (nil: a memory provider
// writing through writer).
func newAggExecutor(mem memory.Allocator, agg stateful.Op, writer *checkpoint.Writer, prov checkpoint.StateStoreProvider) *aggExecutor {
	return &aggExecutor{agg: agg, singleOpState: newSingleOpState(mem, agg, writer, prov)}
}

func (a *aggExecutor) Execute(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
	sep, err := a.epoch(ep)
	if err != nil {
		in[0].Close()
		return nil, err
	}
	return a.agg.Execute(ctx, sep, in[0])
}
func (a *aggExecutor) HasState() bool { return true }
func (a *aggExecutor) CommitState(ctx context.Context, ep stream.EpochInfo) error {
	return a.singleOpState.CommitState(ctx, ep)
}
func (a *aggExecutor) AbortState(ep stream.EpochInfo) { a.singleOpState.AbortState(ep) }
func (a *aggExecutor) Close() error                   { return a.singleOpState.Close() }
func (a *aggExecutor) StateProgress() []stream.StateOperatorProgress {
	return []stream.StateOperatorProgress{a.agg.Report()}
}

func newCountExecutor(t *testing.T, mem memory.Allocator, mode stream.OutputMode) *aggExecutor {
	t.Helper()
	agg, err := stateful.NewAggregate(mem, 0, valueSchema, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("value"), "value")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "count(1)"}},
	}, mode, -1)
	if err != nil {
		t.Fatal(err)
	}
	return newAggExecutor(mem, agg, &checkpoint.Writer{NoSync: true}, nil)
}

func TestStatefulRunningCountAcrossRestart(t *testing.T) {
	for _, mode := range []stream.OutputMode{stream.Update, stream.Complete} {
		t.Run(mode.String(), func(t *testing.T) {
			ctx := context.Background()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			src := memsource.New(mem, valueSchema)
			defer src.Close()
			sink := &collectsink.Sink{}
			step := func(q *Query, rows []any, want []vt.Row) {
				t.Helper()
				var data [][]any
				for _, r := range rows {
					data = append(data, []any{r})
				}
				if _, err := src.AddData(data...); err != nil {
					t.Fatal(err)
				}
				if err := q.ProcessAllAvailable(ctx); err != nil {
					t.Fatal(err)
				}
				if got := sink.Last(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
					t.Fatalf("last batch:\n%swant:\n%s", vt.FormatRows(got), vt.FormatRows(want))
				}
			}
			q := startTestQuery(t, dir, src, sink, newCountExecutor(t, mem, mode), processingTime(0))
			step(q, []any{3}, []vt.Row{{3, 1}})
			step(q, []any{3, 2}, []vt.Row{{3, 2}, {2, 1}})
			q.Stop()
			q = startTestQuery(t, dir, src, sink, newCountExecutor(t, mem, mode), processingTime(0))
			if mode == stream.Update {
				step(q, []any{3, 2, 1}, []vt.Row{{3, 3}, {2, 2}, {1, 1}})
				step(q, []any{4, 4, 4, 4}, []vt.Row{{4, 4}})
			} else {
				step(q, []any{3, 2, 1}, []vt.Row{{3, 3}, {2, 2}, {1, 1}})
				step(q, []any{4, 4, 4, 4}, []vt.Row{{3, 3}, {2, 2}, {1, 1}, {4, 4}})
			}
			p := q.LastProgress()
			if len(p.StateOperators) != 1 || p.StateOperators[0].NumRowsTotal != 4 || p.StateOperators[0].NumRowsUpdated != 1 {
				t.Fatalf("state progress: %s", p.JSON())
			}
			q.Stop()
		})
	}
}

func TestStateSchemaChangeRefused(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	sink := &collectsink.Sink{}
	q := startTestQuery(t, dir, src, sink, newCountExecutor(t, mem, stream.Update), processingTime(0))
	src.AddData([]any{1})
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	q.Stop()
	// The same checkpoint with a different aggregation: refused, naming the
	// state file and both layouts.
	agg, err := stateful.NewAggregate(mem, 0, valueSchema, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("value"), "value")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggSum, Args: []vector.Expr{vector.Col("value")}, Name: "s"}},
	}, stream.Update, -1)
	if err != nil {
		t.Fatal(err)
	}
	src.AddData([]any{2})
	q = startTestQuery(t, dir, src, sink, newAggExecutor(mem, agg, &checkpoint.Writer{NoSync: true}, nil), processingTime(0))
	err = q.AwaitTermination(ctx)
	if err == nil || !strings.Contains(err.Error(), "written by a different query") || !strings.Contains(err.Error(), "_metadata/schema") {
		t.Fatalf("want a refusal naming the state schema file, got %v", err)
	}
}
