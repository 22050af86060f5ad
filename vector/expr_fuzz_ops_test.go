package vector_test

import (
	"context"
	"errors"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// checkOperators runs a fuzz expression through the operators that
// evaluate expressions with their own fast paths (Filter's direct
// column-vs-constant selection, Project's gather of a Filter's selection
// with fused arithmetic) and compares them with plain evaluation: want are
// the values of e over rows, wantErr its error. Filter keeps the rows where
// e is true; Project over a scan gives want; Project over Filter(b) gives
// want at the rows where column b is true, and must not fail where plain
// evaluation does not (it may where it does: it evaluates fewer rows).
func checkOperators(mem memory.Allocator, schema *arrow.Schema, rows []vt.Row, e vector.Expr, dt arrow.DataType, want []any, wantErr error, errorf func(format string, args ...any)) {
	shape := vt.Shape{BatchSize: 3, Sliced: true, GarbageUnderNulls: true}
	scan := func() vector.Operator {
		recs := vt.BuildRecords(mem, schema, rows, shape)
		s, err := vector.NewScan(schema, recs...)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			panic(err)
		}
		return s
	}
	one := vt.BuildRecord(mem, schema, rows)
	input := vt.RowsOf(one)
	one.Release()
	if dt.ID() == arrow.BOOL {
		f, err := vector.NewFilter(mem, scan(), e)
		if err != nil {
			errorf("NewFilter(%s): %v", e, err)
			return
		}
		got, err := drain(f)
		var kept []vt.Row
		for i, v := range want {
			if v == true {
				kept = append(kept, input[i])
			}
		}
		switch {
		case (err == nil) != (wantErr == nil):
			errorf("Filter(%s): %v, evaluation: %v", e, err, wantErr)
		case err == nil && !vt.RowsEqual(kept, got):
			errorf("Filter(%s) kept\n%swant\n%s", e, vt.FormatRows(got), vt.FormatRows(kept))
		}
	}
	p, err := vector.NewProject(mem, scan(), []vector.NamedExpr{vector.As(e, "x")})
	if err != nil {
		errorf("NewProject(%s): %v", e, err)
		return
	}
	got, err := drain(p)
	switch {
	case (err == nil) != (wantErr == nil):
		errorf("Project(%s): %v, evaluation: %v", e, err, wantErr)
	case err == nil && !vt.RowsEqual(asRows(want), got):
		errorf("Project(%s) gave\n%swant\n%s", e, vt.FormatRows(got), vt.FormatRows(asRows(want)))
	}
	f, err := vector.NewFilter(mem, scan(), vector.Col("b"))
	if err != nil {
		panic(err)
	}
	p, err = vector.NewProject(mem, f, []vector.NamedExpr{vector.As(e, "x")})
	if err != nil {
		f.Close()
		errorf("NewProject(%s) over a Filter: %v", e, err)
		return
	}
	got, err = drain(p)
	var selected []any
	for i, r := range input {
		if r[0] == true && wantErr == nil {
			selected = append(selected, want[i])
		}
	}
	switch {
	case err != nil && wantErr == nil:
		errorf("Project(%s) over Filter(b): %v", e, err)
	case err == nil && wantErr == nil && !vt.RowsEqual(asRows(selected), got):
		errorf("Project(%s) over Filter(b) gave\n%swant\n%s", e, vt.FormatRows(got), vt.FormatRows(asRows(selected)))
	}
}

// drain reads op to the end and closes it.
func drain(op vector.Operator) ([]vt.Row, error) {
	defer op.Close()
	var rows []vt.Row
	for {
		rec, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, vt.RowsOf(rec)...)
		rec.Release()
	}
}

func asRows(vals []any) []vt.Row {
	rows := make([]vt.Row, len(vals))
	for i, v := range vals {
		rows[i] = vt.Row{v}
	}
	return rows
}
