package vector

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Expr is an unbound scalar expression. String renders it in the SQL dialect
// (it names the expression in errors and EXPLAIN). Bind resolves it against
// an input schema and returns the evaluator that runs the chosen kernel; a
// bind error is a *BindError. Exprs are immutable and safe to share.
type Expr interface {
	String() string
	Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error)
}

// Evaluator is a bound expression. Eval computes the expression over every
// row of rec and returns an array of rec.NumRows() values of DataType(),
// owned by the caller. rec is borrowed. An Evaluator may keep scratch buffers
// between calls and is used by one goroutine at a time; Bind again for
// another goroutine.
type Evaluator interface {
	DataType() arrow.DataType
	Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error)
}

// ConstantEvaluator is an Evaluator whose value does not depend on the input.
// Kernels test their operands for it at bind time and use constant-operand
// kernels, so that a literal is never expanded into a column (except when a
// constant is itself the result, as in SELECT 1).
type ConstantEvaluator interface {
	Evaluator
	// Value is the constant in the canonical Go representation of its type
	// (see Literal); nil for NULL.
	Value() any
}

// NamedExpr is an expression with the name of the column it produces.
type NamedExpr struct {
	Name string
	Expr Expr
}

// As names an expression.
func As(e Expr, name string) NamedExpr { return NamedExpr{Name: name, Expr: e} }

// bindAll binds every expression against in.
func bindAll(in *arrow.Schema, mem memory.Allocator, exprs []Expr) ([]Evaluator, error) {
	out := make([]Evaluator, len(exprs))
	for i, e := range exprs {
		ev, err := e.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		out[i] = ev
	}
	return out, nil
}

// evalAll evaluates every evaluator over rec; on error it releases what it
// computed so far.
func evalAll(ctx context.Context, evs []Evaluator, rec arrow.Record) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(evs))
	for i, ev := range evs {
		a, err := ev.Eval(ctx, rec)
		if err != nil {
			releaseArrays(out[:i])
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

func releaseArrays(as []arrow.Array) {
	for _, a := range as {
		if a != nil {
			a.Release()
		}
	}
}
