package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// sourceTable is a streaming catalog table over a memory source.
type sourceTable struct{ src stream.Source }

func (t sourceTable) Schema() *arrow.Schema { return t.src.Schema() }
func (t sourceTable) Streaming() bool       { return true }
func (t sourceTable) OpenSource() (stream.Source, bool, error) {
	return t.src, false, nil
}

type oneTable map[string]plan.Table

func (c oneTable) Table(name string) (plan.Table, error) {
	if t, ok := c[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%s: %w", name, plan.ErrTableNotFound)
}

// newTestExec plans query (over the stream s of valueSchema) for
// incremental execution in Append mode.
func newTestExec(t *testing.T, mem memory.Allocator, query string) *streamExec {
	t.Helper()
	src := memsource.New(mem, valueSchema)
	t.Cleanup(func() { src.Close() })
	root, err := plan.AnalyzeSQL(query, oneTable{"s": sourceTable{src}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := newStreamExec(mem, root, stream.Append, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// int32Input is one epoch's input of the values vals (nil: NULL), with
// schema (valueSchema when nil).
func int32Input(t *testing.T, mem memory.Allocator, schema *arrow.Schema, vals ...any) vector.Operator {
	t.Helper()
	if schema == nil {
		schema = valueSchema
	}
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(int32(v.(int)))
		}
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(len(vals)))
	defer rec.Release()
	op, err := vector.NewScan(schema, rec)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// runEpoch executes one epoch of e over in and returns its rows.
func runEpoch(t *testing.T, e *streamExec, id int64, tsMs int64, conf map[string]string, in vector.Operator) []vt.Row {
	t.Helper()
	ep := stream.EpochInfo{ID: id, BatchTimestampMs: tsMs, CheckpointDir: t.TempDir(), NumPartitions: 2, Conf: conf}
	out, err := e.Execute(context.Background(), ep, []vector.Operator{in})
	if err != nil {
		t.Fatalf("epoch %d: %v", id, err)
	}
	recs, err := vector.Drain(context.Background(), out)
	out.Close()
	if err != nil {
		t.Fatalf("epoch %d: %v", id, err)
	}
	defer vector.ReleaseRecords(recs)
	return vt.RowsOf(recs...)
}

// TestCompiledPlanReused checks that a stateless streaming plan (a
// project over a filter pushed into the scan, a project above) is
// compiled once and rerun: the same operators every epoch, the right
// rows every epoch, empty epochs included, and a fresh compile when the
// input's schema changes. With ConfReusePlan false every epoch builds
// its own operators and no chain is kept.
func TestCompiledPlanReused(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	e := newTestExec(t, mem, "SELECT d + 1 AS e FROM (SELECT value * 2 AS d FROM STREAM s WHERE value > 1) WHERE d <> 8")
	defer e.Close()
	var root vector.Operator
	epochs := [][]any{{1, 2, 3, nil, 4, 5}, {}, {7, 0, 4}, {2}}
	wants := [][]vt.Row{{{int32(5)}, {int32(7)}, {int32(11)}}, nil, {{int32(15)}}, {{int32(5)}}}
	for i, vals := range epochs {
		got := runEpoch(t, e, int64(i), 1000, nil, int32Input(t, mem, nil, vals...))
		if !vt.RowsEqual(vt.SortRows(wants[i]), vt.SortRows(got)) {
			t.Fatalf("epoch %d: got\n%swant\n%s", i, vt.FormatRows(got), vt.FormatRows(wants[i]))
		}
		c := e.chains[e.root]
		if c == nil || len(e.chains) != 1 {
			t.Fatalf("epoch %d: %d chains, none for the root %s", i, len(e.chains), e.root)
		}
		if root == nil {
			root = c.root
		} else if c.root != root {
			t.Fatalf("epoch %d: the operators were built again", i)
		}
		if c.inUse.Load() {
			t.Fatalf("epoch %d: chain still in use after its output was closed", i)
		}
	}
	// The same column with other metadata: bound again.
	md := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int32, Nullable: true, Metadata: arrow.NewMetadata([]string{"k"}, []string{"v"})}}, nil)
	got := runEpoch(t, e, 4, 1000, nil, int32Input(t, mem, md, 3, 4))
	if want := []vt.Row{{int32(7)}}; !vt.RowsEqual(got, want) {
		t.Fatalf("after the schema change: got\n%s", vt.FormatRows(got))
	}
	if e.chains[e.root] == nil || e.chains[e.root].root == root {
		t.Fatal("a changed input schema did not compile the chain again")
	}
	// Reuse off: built every epoch, the chain left alone.
	kept := e.chains[e.root].root
	got = runEpoch(t, e, 5, 1000, map[string]string{ConfReusePlan: "false"}, int32Input(t, mem, md, 3))
	if want := []vt.Row{{int32(7)}}; !vt.RowsEqual(got, want) {
		t.Fatalf("reuse off: got\n%s", vt.FormatRows(got))
	}
	if e.chains[e.root].root != kept {
		t.Fatal("reuse off touched the compiled chain")
	}
}

// TestCompiledPlanOverlappingEpochs checks that an epoch whose previous
// output is still open (a sink that closes late) builds its own
// operators instead of rerunning the ones in use.
func TestCompiledPlanOverlappingEpochs(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	e := newTestExec(t, mem, "SELECT value * 3 AS d FROM STREAM s WHERE value > 0")
	defer e.Close()
	ctx := context.Background()
	ep := func(id int64) stream.EpochInfo {
		return stream.EpochInfo{ID: id, BatchTimestampMs: 1000, CheckpointDir: t.TempDir(), NumPartitions: 1}
	}
	first, err := e.Execute(ctx, ep(0), []vector.Operator{int32Input(t, mem, nil, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.Execute(ctx, ep(1), []vector.Operator{int32Input(t, mem, nil, 5)})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		op   vector.Operator
		want []vt.Row
	}{{second, []vt.Row{{int32(15)}}}, {first, []vt.Row{{int32(3)}, {int32(6)}}}} {
		recs, err := vector.Drain(ctx, c.op)
		c.op.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := vt.RowsOf(recs...)
		vector.ReleaseRecords(recs)
		if !vt.RowsEqual(vt.SortRows(c.want), vt.SortRows(got)) {
			t.Fatalf("output %d: got\n%swant\n%s", i, vt.FormatRows(got), vt.FormatRows(c.want))
		}
	}
	// Both closed: the kept chain serves the next epoch.
	if got := runEpoch(t, e, 2, 1000, nil, int32Input(t, mem, nil, 4)); !vt.RowsEqual(got, []vt.Row{{int32(12)}}) {
		t.Fatalf("after both closed: got\n%s", vt.FormatRows(got))
	}
}

// TestCompiledPlanCurrentTimestamp checks that operators that bound
// current_timestamp() as a constant are not reused: every epoch sees its
// own timestamp, while the scan's filter below is still compiled once.
func TestCompiledPlanCurrentTimestamp(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	e := newTestExec(t, mem, "SELECT CAST(current_timestamp() AS BIGINT) AS now, value FROM STREAM s WHERE value > 0")
	defer e.Close()
	for i, ms := range []int64{5000, 9000, 12000} {
		got := runEpoch(t, e, int64(i), ms, nil, int32Input(t, mem, nil, 1, 0))
		if want := []vt.Row{{ms / 1000, int32(1)}}; !vt.RowsEqual(got, want) {
			t.Fatalf("epoch %d at %d ms: got\n%swant\n%s", i, ms, vt.FormatRows(got), vt.FormatRows(want))
		}
	}
	if !e.unchainable[e.root] || e.chains[e.root] != nil {
		t.Fatalf("the root that reads current_timestamp() was kept (chains %d)", len(e.chains))
	}
	if len(e.chains) != 1 {
		t.Fatalf("%d chains, want the scan's", len(e.chains))
	}
}
