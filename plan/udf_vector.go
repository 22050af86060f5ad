package plan

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// udfExpr is the vector form of a user function's call: its arguments'
// columns handed to the function's Eval whole.
type udfExpr struct {
	f    *ScalarFunction
	args []vector.Expr
}

func (u *udfExpr) String() string {
	s := u.f.Name + "("
	for i, a := range u.args {
		if i > 0 {
			s += ", "
		}
		s += a.String()
	}
	return s + ")"
}

// Bind implements vector.Expr.
func (u *udfExpr) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	evs := make([]vector.Evaluator, len(u.args))
	for i, a := range u.args {
		ev, err := a.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		if !arrow.TypeEqual(ev.DataType(), u.f.Args[i]) {
			return nil, &vector.BindError{Expr: u.String(), Err: fmt.Errorf("argument %d of %s is %s, not %s: %w", i+1, u.f.Name, vector.TypeName(ev.DataType()), vector.TypeName(u.f.Args[i]), vector.ErrType)}
		}
		evs[i] = ev
	}
	return &udfEval{f: u.f, args: evs, mem: mem, vals: make([]arrow.Array, len(evs))}, nil
}

type udfEval struct {
	f    *ScalarFunction
	args []vector.Evaluator
	mem  memory.Allocator
	vals []arrow.Array // scratch: the arguments' columns of one Eval
}

func (u *udfEval) DataType() arrow.DataType { return u.f.Result }

// Eval implements vector.Evaluator: the arguments are computed, handed to
// the function and released; the result is checked to be what the
// function promised, so that a faulty function fails its query instead of
// corrupting the operators above it.
func (u *udfEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	defer func() {
		for i, v := range u.vals {
			if v != nil {
				v.Release()
				u.vals[i] = nil
			}
		}
	}()
	for i, a := range u.args {
		v, err := a.Eval(ctx, rec)
		if err != nil {
			return nil, err
		}
		u.vals[i] = v
	}
	out, err := u.call(ctx)
	if err != nil {
		return nil, fmt.Errorf("user function %s: %w", vector.QuoteIdent(u.f.Name), err)
	}
	n := int(rec.NumRows())
	if out == nil || out.Len() != n || !arrow.TypeEqual(out.DataType(), u.f.Result) {
		got := "nil"
		if out != nil {
			got = fmt.Sprintf("%d values of %s", out.Len(), vector.TypeName(out.DataType()))
			out.Release()
		}
		return nil, fmt.Errorf("user function %s returned %s, want %d values of %s", vector.QuoteIdent(u.f.Name), got, n, vector.TypeName(u.f.Result))
	}
	return out, nil
}

// call runs the function, turning its panic into an error: the function
// is outside code, and a query's failure must not take the process down.
func (u *udfEval) call(ctx context.Context) (out arrow.Array, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return u.f.Eval(ctx, u.mem, u.vals)
}
