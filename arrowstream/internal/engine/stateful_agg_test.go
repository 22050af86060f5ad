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
	agg stateful.Op
	// stores holds the state (nil: the operator's own memory provider).
	stores checkpoint.StateStoreProvider
}

func (a *aggExecutor) Execute(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
	return a.agg.Execute(ctx, stateful.Epoch{EpochInfo: ep, Stores: a.stores}, in[0])
}
func (a *aggExecutor) CommitState(ctx context.Context, _ stream.EpochInfo) error {
	return a.agg.Commit(ctx)
}
func (a *aggExecutor) AbortState(stream.EpochInfo) { a.agg.Abort() }
func (a *aggExecutor) StateProgress() []stream.StateOperatorProgress {
	return []stream.StateOperatorProgress{a.agg.Report()}
}

func newCountExecutor(t *testing.T, mem memory.Allocator, mode stream.OutputMode) *aggExecutor {
	t.Helper()
	agg, err := stateful.NewAggregate(mem, 0, valueSchema, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("value"), "value")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "count(1)"}},
	}, mode, -1, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return &aggExecutor{agg: agg}
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
	}, stream.Update, -1, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	src.AddData([]any{2})
	q = startTestQuery(t, dir, src, sink, &aggExecutor{agg: agg}, processingTime(0))
	err = q.AwaitTermination(ctx)
	if err == nil || !strings.Contains(err.Error(), "written by a different query") || !strings.Contains(err.Error(), "_metadata/schema") {
		t.Fatalf("want a refusal naming the state schema file, got %v", err)
	}
}
