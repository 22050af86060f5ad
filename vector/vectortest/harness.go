package vectortest

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// NewAllocator returns the test allocator: checked (it fails t at cleanup
// unless every byte it handed out was released, naming each leak's
// allocation site) and poisoning (released memory is overwritten, so a
// value read after its array was released is garbage, not silently right).
// It is the one switch for every test built on this package and on
// streamtest; see internal/testutil/poisonmem.
func NewAllocator(t testing.TB) *poisonmem.Allocator {
	return poisonmem.NewChecked(t)
}

// Input is one input of an operator test.
type Input struct {
	Schema *arrow.Schema
	Rows   []Row
}

// OperatorCase is a table-test case for an operator.
type OperatorCase struct {
	Name   string
	Inputs []Input
	// Build constructs the operator under test over inputs. On success the
	// operator owns the inputs (its Close closes them); on error the harness
	// closes them.
	Build func(mem memory.Allocator, inputs []vector.Operator) (vector.Operator, error)
	// Want is the expected output; compared as a multiset unless Ordered.
	Want    []Row
	Ordered bool
	// WantSchema, when set, must equal the operator's output schema.
	WantSchema *arrow.Schema
	// WantErr, when set, is a substring of the error Build or Next must
	// return.
	WantErr string
	// Shapes overrides the layouts the case runs in (default Shapes).
	Shapes []Shape
	// NoEmptyBatches skips the run with empty bufferless batches
	// interleaved (for cases that check the source itself, which may pass
	// empty records on).
	NoEmptyBatches bool
}

// RunOperator runs c in every shape, plus a run with empty bufferless
// batches interleaved (see Shape.EmptyBatches) unless c.Shapes already has
// one, plus an early-Close run, each on its own checked allocator.
func RunOperator(t *testing.T, c OperatorCase) {
	t.Helper()
	shapes := c.Shapes
	if shapes == nil {
		shapes = Shapes
	}
	if !c.NoEmptyBatches {
		shapes = withEmptyBatches(shapes)
	}
	for _, shape := range shapes {
		t.Run(c.Name+"/"+shape.String(), func(t *testing.T) {
			mem := NewAllocator(t)
			got, err := runOperatorOnce(t, mem, c, shape, -1)
			checkOperatorResult(t, c, got, err)
		})
	}
	t.Run(c.Name+"/early-close", func(t *testing.T) {
		mem := NewAllocator(t)
		_, _ = runOperatorOnce(t, mem, c, Shape{BatchSize: 1}, 1)
	})
}

// withEmptyBatches appends an EmptyBatches variant of the first shape (the
// case's main batch size) unless one is there.
func withEmptyBatches(shapes []Shape) []Shape {
	for _, s := range shapes {
		if s.EmptyBatches {
			return shapes
		}
	}
	if len(shapes) == 0 {
		return shapes
	}
	e := shapes[0]
	e.EmptyBatches = true
	return append(shapes[:len(shapes):len(shapes)], e)
}

func checkOperatorResult(t *testing.T, c OperatorCase, got []Row, err error) {
	t.Helper()
	if c.WantErr != "" {
		if err == nil || !strings.Contains(err.Error(), c.WantErr) {
			t.Fatalf("want error containing %q, got %v", c.WantErr, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	want := c.Want
	if !c.Ordered {
		want, got = SortRows(want), SortRows(got)
	}
	if !RowsEqual(want, got) {
		t.Fatalf("wrong result (ordered=%v)\nwant:\n%sgot:\n%s", c.Ordered, FormatRows(want), FormatRows(got))
	}
}

// runOperatorOnce builds the inputs in shape, runs the operator and returns
// its rows. With stopAfter >= 0 it closes the operator after that many
// records (to check that an abandoned operator releases everything).
func runOperatorOnce(t *testing.T, mem memory.Allocator, c OperatorCase, shape Shape, stopAfter int) ([]Row, error) {
	t.Helper()
	ctx := context.Background()
	inputs := make([]vector.Operator, len(c.Inputs))
	for i, in := range c.Inputs {
		recs := BuildRecords(mem, in.Schema, in.Rows, shape)
		if shape.EmptyBatches {
			inputs[i] = NewFeed(in.Schema, recs...)
			for _, r := range recs {
				r.Release()
			}
			continue
		}
		scan, err := vector.NewScan(in.Schema, recs...)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		inputs[i] = scan
	}
	op, err := c.Build(mem, inputs)
	if err != nil {
		for _, in := range inputs {
			in.Close()
		}
		return nil, err
	}
	defer func() {
		if err := op.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := op.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}()
	if c.WantSchema != nil && !c.WantSchema.Equal(op.Schema()) {
		t.Errorf("schema:\nwant %s\ngot  %s", c.WantSchema, op.Schema())
	}
	var rows []Row
	for n := 0; stopAfter < 0 || n < stopAfter; n++ {
		rec, err := op.Next(ctx)
		if errors.Is(err, io.EOF) {
			if rec != nil {
				t.Errorf("Next returned a record with io.EOF")
			}
			// EOF is sticky.
			if again, err2 := op.Next(ctx); !errors.Is(err2, io.EOF) || again != nil {
				t.Errorf("Next after EOF: %v, %v", again, err2)
			}
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		if !rec.Schema().Equal(op.Schema()) {
			t.Errorf("record schema %s differs from operator schema %s", rec.Schema(), op.Schema())
		}
		if rec.NumRows() == 0 {
			t.Errorf("Next returned an empty record")
		}
		rows = append(rows, RowsOf(rec)...)
		rec.Release()
	}
	return rows, nil
}

// ExprCase is a table-test case for an expression over the rows of Schema.
type ExprCase struct {
	Name   string
	Schema *arrow.Schema
	Rows   []Row
	Expr   vector.Expr
	// Want has one normalized value per row.
	Want []any
	// WantType, when set, must equal the evaluator's type.
	WantType arrow.DataType
	// WantErr, when set, is a substring of the Bind or Eval error.
	WantErr string
	// NullIntolerant says the result is null whenever any input column is
	// null (every column of Schema must feed the expression); the harness
	// then also injects nulls and checks that they propagate.
	NullIntolerant bool
}

// RunExpr runs each case in every shape on a checked allocator.
func RunExpr(t *testing.T, cases ...ExprCase) {
	t.Helper()
	for _, c := range cases {
		for _, shape := range Shapes {
			t.Run(c.Name+"/"+shape.String(), func(t *testing.T) {
				runExprOnce(t, c, c.Rows, c.Want, shape)
			})
		}
		if c.NullIntolerant && c.WantErr == "" && c.Schema.NumFields() > 0 {
			rows, want := injectNulls(c)
			for _, shape := range Shapes[:3] {
				t.Run(c.Name+"/null-injected/"+shape.String(), func(t *testing.T) {
					runExprOnce(t, c, rows, want, shape)
				})
			}
		}
	}
}

// injectNulls sets one column to null in every other row and expects null
// there.
func injectNulls(c ExprCase) ([]Row, []any) {
	rows := make([]Row, len(c.Rows))
	want := append([]any(nil), c.Want...)
	n := c.Schema.NumFields()
	for i, r := range c.Rows {
		rows[i] = append(Row(nil), r...)
		if i%2 == 0 {
			rows[i][(i/2)%n] = nil
			want[i] = nil
		}
	}
	return rows, want
}

func runExprOnce(t *testing.T, c ExprCase, rows []Row, want []any, shape Shape) {
	t.Helper()
	mem := NewAllocator(t)
	ev, err := c.Expr.Bind(c.Schema, mem)
	if err != nil {
		if c.WantErr != "" && strings.Contains(err.Error(), c.WantErr) {
			return
		}
		t.Fatalf("Bind(%s): %v", c.Expr, err)
	}
	if c.WantType != nil && !arrow.TypeEqual(c.WantType, ev.DataType()) {
		t.Errorf("type of %s: want %s, got %s", c.Expr, c.WantType, ev.DataType())
	}
	recs := BuildRecords(mem, c.Schema, rows, shape)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var got []any
	for _, rec := range recs {
		arr, err := ev.Eval(context.Background(), rec)
		if err != nil {
			if c.WantErr != "" && strings.Contains(err.Error(), c.WantErr) {
				return
			}
			t.Fatalf("Eval(%s): %v", c.Expr, err)
		}
		if arr.Len() != int(rec.NumRows()) {
			t.Errorf("Eval(%s) returned %d values for %d rows", c.Expr, arr.Len(), rec.NumRows())
		}
		if !arrow.TypeEqual(arr.DataType(), ev.DataType()) {
			t.Errorf("Eval(%s) returned %s, evaluator says %s", c.Expr, arr.DataType(), ev.DataType())
		}
		got = append(got, ValuesOf(arr)...)
		arr.Release()
	}
	if c.WantErr != "" {
		t.Fatalf("%s: want error containing %q, got none (values %v)", c.Expr, c.WantErr, got)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: want %d values, got %d: %v", c.Expr, len(want), len(got), got)
	}
	for i := range want {
		if !ValueEqual(want[i], got[i]) {
			t.Errorf("%s row %d (%v): want %s, got %s", c.Expr, i, rows[i], formatValue(Normalize(want[i])), formatValue(got[i]))
		}
	}
}
