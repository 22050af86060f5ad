package vector_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var rerunSchema = arrow.NewSchema([]arrow.Field{
	{Name: "t", Type: vector.Timestamp, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
}, nil)

// rerunTrees are operator trees over one input: Project over Filter
// (the fused selection), a sliding WindowAssign (pending batches) under
// a Project, a constant false filter (reads nothing).
var rerunTrees = []struct {
	name  string
	build func(mem memory.Allocator, in vector.Operator) (vector.Operator, error)
}{
	{"project-filter", func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
		f, err := vector.NewFilter(mem, in, vector.Gt(vector.Col("v"), vector.Lit(int64(3))))
		if err != nil {
			return nil, err
		}
		return vector.NewProject(mem, f, []vector.NamedExpr{{Name: "w", Expr: vector.Add(vector.Col("v"), vector.Lit(int64(1)))}, {Name: "t", Expr: vector.Col("t")}})
	}},
	{"window", func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
		w, err := vector.NewWindowAssign(mem, in, vector.Col("t"), 30*opsSec, 10*opsSec, 0, "w")
		if err != nil {
			return nil, err
		}
		return vector.NewProject(mem, w, []vector.NamedExpr{{Name: "v", Expr: vector.Col("v")}, {Name: "w", Expr: vector.Col("w")}})
	}},
	{"false", func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
		return vector.NewFilter(mem, in, vector.Lit(false))
	}},
}

// TestRerunMatchesFresh runs each tree once built and rerun over a Slot
// for many random runs (empty ones, NULLs, several batches, consumers
// that stop after a record) and checks every run against the same tree
// built afresh over the run's input. The allocator ends at zero.
func TestRerunMatchesFresh(t *testing.T) {
	for _, tree := range rerunTrees {
		t.Run(tree.name, func(t *testing.T) {
			ctx := context.Background()
			mem := vt.NewAllocator(t)
			rng := rand.New(rand.NewSource(1))
			slot := vector.NewSlot(rerunSchema)
			op, err := tree.build(mem, slot)
			if err != nil {
				t.Fatal(err)
			}
			defer op.Close()
			for run := 0; run < 60; run++ {
				var batches [][]vt.Row
				for b := rng.Intn(4); b > 0; b-- {
					var rows []vt.Row
					for n := rng.Intn(6); n > 0; n-- {
						var ts, v any = rng.Int63n(100) * opsSec, rng.Int63n(8)
						if rng.Intn(6) == 0 {
							ts = nil
						}
						if rng.Intn(6) == 0 {
							v = nil
						}
						rows = append(rows, vt.Row{ts, v})
					}
					batches = append(batches, rows)
				}
				stop := -1 // read everything
				if rng.Intn(4) == 0 {
					stop = 1 // stop after the first record
				}
				fresh, err := tree.build(mem, feedOf(mem, batches))
				if err != nil {
					t.Fatal(err)
				}
				want := pull(t, ctx, fresh, stop)
				fresh.Close()
				if err := slot.Set(feedOf(mem, batches)); err != nil {
					t.Fatal(err)
				}
				got := pull(t, ctx, op, stop)
				if err := slot.CloseInput(); err != nil {
					t.Fatal(err)
				}
				if err := vector.Rerun(op); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				if !vt.RowsEqual(want, got) {
					t.Fatalf("run %d (%v, stop %d): rerun gave\n%sfresh gave\n%s", run, batches, stop, vt.FormatRows(got), vt.FormatRows(want))
				}
			}
		})
	}
}

func feedOf(mem memory.Allocator, batches [][]vt.Row) vector.Operator {
	recs := make([]arrow.Record, len(batches))
	for i, b := range batches {
		recs[i] = vt.BuildRecord(mem, rerunSchema, b)
	}
	return vector.NewOwnedScan(rerunSchema, recs)
}

// pull reads op's rows until io.EOF, or stop records when stop >= 0.
func pull(t *testing.T, ctx context.Context, op vector.Operator, stop int) []vt.Row {
	t.Helper()
	var rows []vt.Row
	for n := 0; stop < 0 || n < stop; n++ {
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, vt.RowsOf(rec)...)
		rec.Release()
	}
	return rows
}

// TestRerunRefused checks that a closed operator, and one over an input
// that cannot run again, refuse to rerun, and that a Slot refuses a
// second input in one run.
func TestRerunRefused(t *testing.T) {
	mem := vt.NewAllocator(t)
	scan, err := vector.NewScan(rerunSchema)
	if err != nil {
		t.Fatal(err)
	}
	p, err := vector.NewProject(mem, scan, []vector.NamedExpr{{Name: "v", Expr: vector.Col("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := vector.Rerun(p); !errors.Is(err, vector.ErrCannotRerun) {
		t.Fatalf("over a Scan: %v", err)
	}
	p.Close()
	slot := vector.NewSlot(rerunSchema)
	f, err := vector.NewFilter(mem, slot, vector.Lit(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := vector.Rerun(f); err != nil {
		t.Fatal(err)
	}
	if err := slot.Set(feedOf(mem, nil)); err != nil {
		t.Fatal(err)
	}
	if err := slot.Set(feedOf(mem, nil)); err == nil {
		t.Fatal("a second input in one run was taken")
	}
	f.Close()
	if err := vector.Rerun(f); !errors.Is(err, vector.ErrCannotRerun) {
		t.Fatalf("closed: %v", fmt.Sprint(err))
	}
}
