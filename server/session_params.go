package server

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
)

// parseParams parses req.SQL with its $n placeholders bound to
// req.Params (one row; a column per placeholder, of any type ParamExpr
// binds), or, without values, to NULLs of type STRING. It returns the
// statement and the number of placeholders ($n up to which).
func parseParams(req Request) (sql.Statement, int, error) {
	if !strings.Contains(req.SQL, "$") {
		st, err := sql.Parse(req.SQL)
		return st, 0, err
	}
	n := 0
	bind := func(index int, pos sql.Pos) (sql.Expr, error) {
		n = max(n, index)
		if req.Params == nil {
			return plan.NullParam(arrow.BinaryTypes.String, pos)
		}
		if index > int(req.Params.NumCols()) {
			return nil, fmt.Errorf("parameter $%d has no value: %d bound", index, req.Params.NumCols())
		}
		if req.Params.NumRows() < 1 {
			return nil, fmt.Errorf("parameter $%d has no value: the parameter batch has no rows", index)
		}
		x, err := plan.ParamExpr(req.Params.Column(index-1), 0, pos)
		if err != nil {
			return nil, fmt.Errorf("parameter $%d: %w", index, err)
		}
		return x, nil
	}
	st, err := sql.ParseWithParams(req.SQL, sql.Limits{}, bind)
	return st, n, err
}

// paramSchema is the parameter schema of a statement with n
// placeholders: the types of the values bound when describing, else
// strings (a client may bind any type ParamExpr takes).
func paramSchema(n int, given arrow.Record) *arrow.Schema {
	if n == 0 {
		return nil
	}
	fields := make([]arrow.Field, n)
	for i := range fields {
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if given != nil && i < int(given.NumCols()) {
			dt = given.Column(i).DataType()
		}
		fields[i] = arrow.Field{Name: fmt.Sprintf("$%d", i+1), Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}
