package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// Env is what physical planning needs from the execution context.
type Env struct {
	// BatchTimestamp is the value of current_timestamp(): the epoch's
	// processing time for a streaming query (the recorded one on replay),
	// the query's start for a batch query.
	BatchTimestamp time.Time

	// timestampRead is set when an expression converted under this Env
	// took BatchTimestamp as a constant (see ReadBatchTimestamp).
	timestampRead bool
}

// ReadBatchTimestamp reports whether an expression converted under env
// (ToVectorExpr, BuildOperator) took its BatchTimestamp as a constant:
// operators built so are valid for that timestamp only, and a streaming
// query that keeps its operators across epochs rebuilds them.
func (env *Env) ReadBatchTimestamp() bool { return env != nil && env.timestampRead }

// nowFunc is the clock of batch queries (a variable for tests).
var nowFunc = time.Now

// batchMicros returns current_timestamp() in microseconds.
func (env *Env) batchMicros() (int64, error) {
	if env == nil || env.BatchTimestamp.IsZero() {
		return 0, fmt.Errorf("current_timestamp() needs the batch timestamp (plan.Env.BatchTimestamp): %w", ErrUnsupported)
	}
	env.timestampRead = true
	return env.BatchTimestamp.UnixMicro(), nil
}

// ToVectorExpr converts a resolved expression into the vector expression
// that computes it over the same input schema. current_timestamp()
// becomes the constant env.BatchTimestamp.
func ToVectorExpr(e Expr, env *Env) (vector.Expr, error) {
	switch x := e.(type) {
	case nil:
		return nil, fmt.Errorf("plan: nil expression")
	case *ColumnRef:
		return &vector.ColumnAt{Index: x.Index, Name: x.Name}, nil
	case *Literal:
		return literalToVector(x), nil
	case *CurrentTimestamp:
		us, err := env.batchMicros()
		if err != nil {
			return nil, err
		}
		return vector.TypedLit(vector.Timestamp, arrow.Timestamp(us)), nil
	case *Cast:
		c, err := ToVectorExpr(x.X, env)
		if err != nil {
			return nil, err
		}
		return &vector.CastExpr{X: c, To: x.To, Mode: x.Mode, Loc: x.Loc, YMFields: x.ymFields}, nil
	case *GetField:
		c, err := ToVectorExpr(x.X, env)
		if err != nil {
			return nil, err
		}
		return &fieldAt{x: c, index: x.Index, name: x.Name}, nil
	case *Case:
		whens := make([]vector.When, len(x.Whens))
		for i, w := range x.Whens {
			c, err := ToVectorExpr(w.Cond, env)
			if err != nil {
				return nil, err
			}
			t, err := ToVectorExpr(w.Then, env)
			if err != nil {
				return nil, err
			}
			whens[i] = vector.When{Cond: c, Then: t}
		}
		var els vector.Expr
		if x.Else != nil {
			var err error
			if els, err = ToVectorExpr(x.Else, env); err != nil {
				return nil, err
			}
		} else {
			els = vector.TypedLit(x.Type, nil)
		}
		return vector.Case(whens, els), nil
	case *Call:
		args := make([]vector.Expr, len(x.Args))
		for i, a := range x.Args {
			v, err := ToVectorExpr(a, env)
			if err != nil {
				return nil, err
			}
			args[i] = v
		}
		if x.UDF != nil {
			return &udfExpr{f: x.UDF, args: args}, nil
		}
		return callToVector(x, args)
	case *HigherOrder:
		return x.toVector(env)
	case *LambdaVar:
		return &vector.LambdaVar{Name: x.Key, Type: x.Type}, nil
	case *aggPlaceholder:
		return nil, fmt.Errorf("aggregate %s outside an Aggregate: %w", x, ErrAggregate)
	}
	return nil, fmt.Errorf("plan: cannot convert %T to a vector expression", e)
}

func literalToVector(l *Literal) vector.Expr {
	if l.Type != nil && l.Type.ID() == arrow.DURATION {
		if d, ok := l.Value.(arrow.Duration); ok {
			return vector.IntervalLit(int64(d))
		}
	}
	return vector.TypedLit(l.Type, l.Value)
}

// intervalMicros returns the microseconds of a constant interval.
func intervalMicros(e Expr) (int64, bool) {
	if l, ok := e.(*Literal); ok && l.Type != nil && l.Type.ID() == arrow.DURATION {
		if d, ok := l.Value.(arrow.Duration); ok {
			return int64(d), true
		}
	}
	return 0, false
}

func isInterval(e Expr) bool { return e.DataType() != nil && e.DataType().ID() == arrow.DURATION }

// callToVector builds the vector call of fn; orig are the plan arguments
// (for interval constants), args their vector forms.
func callToVector(call *Call, args []vector.Expr) (vector.Expr, error) {
	fn, orig := call.Func, call.Args
	if e, ok, err := ymCallToVector(call, args); ok {
		return e, err
	}
	if e, ok := calendarCallToVector(call, args); ok {
		if f, isF := e.(*vector.FuncExpr); isF {
			f.Mode, f.Loc = call.Mode, call.Loc
		}
		return e, nil
	}
	if e, ok, err := dtCallToVector(call, args); ok {
		return e, err
	}
	if e, ok := extractCallToVector(call, args); ok {
		return e, nil
	}
	if fn == dtToStringFunc && len(args) == 2 {
		return vector.DTToString(args[0], args[1]), nil
	}
	arith := func(op vector.ArithOp) (vector.Expr, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("%s takes 2 arguments, got %d: %w", fn, len(args), ErrType)
		}
		return &vector.Arithmetic{Op: op, Left: args[0], Right: args[1], Mode: call.Mode}, nil
	}
	arity := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d arguments, got %d: %w", fn, n, len(args), ErrType)
		}
		return nil
	}
	bin := func(f func(l, r vector.Expr) vector.Expr) (vector.Expr, error) {
		if err := arity(2); err != nil {
			return nil, err
		}
		return f(args[0], args[1]), nil
	}
	switch fn {
	case "+", "-":
		if err := arity(2); err != nil {
			return nil, err
		}
		if isInterval(orig[1]) || isInterval(orig[0]) {
			ts, iv := 0, 1
			if isInterval(orig[0]) {
				if fn == "-" {
					return nil, fmt.Errorf("cannot subtract a timestamp from an interval: %w", ErrType)
				}
				ts, iv = 1, 0
			}
			us, ok := intervalMicros(orig[iv])
			if !ok {
				return nil, fmt.Errorf("the interval of %s must be a constant: %w", orig[iv], ErrUnsupported)
			}
			if fn == "-" {
				us = -us
			}
			return vector.TimestampAddInterval(args[ts], us), nil
		}
		if fn == "+" {
			return arith(vector.ArithAdd)
		}
		return arith(vector.ArithSub)
	case "*":
		return arith(vector.ArithMul)
	case "/":
		return arith(vector.ArithDiv)
	case "%":
		return arith(vector.ArithMod)
	case "=":
		return bin(vector.Eq)
	case "<>":
		return bin(vector.NotEq)
	case "<":
		return bin(vector.Lt)
	case "<=":
		return bin(vector.Le)
	case ">":
		return bin(vector.Gt)
	case ">=":
		return bin(vector.Ge)
	case "<=>":
		return bin(vector.EqualNullSafe)
	case "and":
		return bin(vector.And)
	case "or":
		return bin(vector.Or)
	case "like":
		return bin(vector.Like)
	case "negative":
		if err := arity(1); err != nil {
			return nil, err
		}
		return &vector.Negation{Child: args[0], Mode: call.Mode}, nil
	case "not":
		if err := arity(1); err != nil {
			return nil, err
		}
		return vector.Not(args[0]), nil
	case "isnull":
		if err := arity(1); err != nil {
			return nil, err
		}
		return vector.IsNull(args[0]), nil
	case "isnotnull":
		if err := arity(1); err != nil {
			return nil, err
		}
		return vector.IsNotNull(args[0]), nil
	case "in":
		if len(args) < 2 {
			return nil, fmt.Errorf("IN needs a value and a list: %w", ErrType)
		}
		return vector.In(args[0], args[1:]...), nil
	case "between":
		if err := arity(3); err != nil {
			return nil, err
		}
		return vector.Between(args[0], args[1], args[2]), nil
	case replicateRows:
		if err := arity(1); err != nil {
			return nil, err
		}
		return vector.ReplicateCount(args[0]), nil
	case scalarSubqueryCheck:
		if err := arity(2); err != nil {
			return nil, err
		}
		return vector.ScalarSubqueryCheck(args[0], args[1]), nil
	case "window_time":
		if err := arity(1); err != nil {
			return nil, err
		}
		return vector.TimestampAddInterval(&fieldAt{x: args[0], index: 1, name: "end"}, -1), nil
	}
	e, err := vector.LookupFunction(fn, args)
	switch x := e.(type) {
	case *vector.FuncExpr:
		x.Loc, x.Mode = call.Loc, call.Mode
	case *vector.CastExpr: // int(x), string(x), ...: Spark's cast functions
		x.Mode, x.Loc = call.Mode, call.Loc
	}
	return e, err
}

// fieldAt is a vector expression extracting field index of a struct
// (window.start): the field's values with the struct's nulls added.
type fieldAt struct {
	x     vector.Expr
	index int
	name  string
}

func (f *fieldAt) String() string { return f.x.String() + "." + vector.QuoteIdent(f.name) }

// Bind implements vector.Expr.
func (f *fieldAt) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	ev, err := f.x.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	st, ok := ev.DataType().(*arrow.StructType)
	if !ok || f.index < 0 || f.index >= st.NumFields() {
		return nil, &vector.BindError{Expr: f.String(), Err: fmt.Errorf("cannot access field %s of %s: %w", vector.QuoteIdent(f.name), vector.TypeName(ev.DataType()), vector.ErrType)}
	}
	return &fieldEval{child: ev, index: f.index, dt: st.Field(f.index).Type, mem: mem}, nil
}

type fieldEval struct {
	child vector.Evaluator
	index int
	dt    arrow.DataType
	mem   memory.Allocator
}

func (f *fieldEval) DataType() arrow.DataType { return f.dt }

func (f *fieldEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := f.child.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	st, ok := arr.(*array.Struct)
	if !ok {
		return nil, fmt.Errorf("plan: field access on a %s array", arr.DataType())
	}
	child := st.Field(f.index)
	if st.NullN() == 0 {
		child.Retain()
		return child, nil
	}
	// A field of a null struct is null: AND the validity bitmaps into a
	// new one and share the value buffers.
	n := child.Len()
	cd := child.Data()
	off := cd.Offset()
	buf := memory.NewResizableBuffer(f.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(off + n))))
	out := buf.Bytes()
	pb, poff := st.NullBitmapBytes(), st.Data().Offset()
	cb := child.NullBitmapBytes()
	nulls := 0
	for i := 0; i < n; i++ {
		valid := (pb == nil || bitutil.BitIsSet(pb, poff+i)) && (cb == nil || bitutil.BitIsSet(cb, off+i))
		bitutil.SetBitTo(out, off+i, valid)
		if !valid {
			nulls++
		}
	}
	bufs := append([]*memory.Buffer{buf}, cd.Buffers()[1:]...)
	data := array.NewData(cd.DataType(), n, bufs, cd.Children(), nulls, off)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data), nil
}
