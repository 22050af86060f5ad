package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Higher-order functions: transform, filter, exists, forall, aggregate
// (reduce), zip_with, map_filter, transform_keys and transform_values take
// lambdas (x -> ..., (x, i) -> ...). A lambda's parameters resolve to
// LambdaVars; vector evaluates the body once per batch over all the
// elements of the batch's arrays (see vector.HigherOrder).

// LambdaVar is a lambda parameter. Key names it uniquely (the parameter
// and its lambda's position) so that nested lambdas do not collide.
type LambdaVar struct {
	Name string
	Key  string
	Type arrow.DataType
}

// LambdaFn is a resolved lambda.
type LambdaFn struct {
	Params []*LambdaVar
	Body   Expr
}

// HigherOrder is a call of a higher-order function: Args are its value
// arguments (arrays, maps, the initial value of aggregate) and Fns its
// lambdas, in the order written.
type HigherOrder struct {
	Func string
	Args []Expr
	Fns  []*LambdaFn
	// Order is the written argument order: i >= 0 is Args[i], -1-j is
	// Fns[j].
	Order []int
	Type  arrow.DataType
}

func (v *LambdaVar) DataType() arrow.DataType { return v.Type }
func (v *LambdaVar) Nullable() bool           { return true }
func (v *LambdaVar) String() string           { return vector.QuoteIdent(v.Name) }
func (v *LambdaVar) Children() []Expr         { return nil }
func (v *LambdaVar) exprNode()                {}

func (h *HigherOrder) DataType() arrow.DataType { return h.Type }
func (h *HigherOrder) Nullable() bool           { return true }
func (h *HigherOrder) exprNode()                {}

func (h *HigherOrder) Children() []Expr {
	out := append([]Expr(nil), h.Args...)
	for _, f := range h.Fns {
		out = append(out, f.Body)
	}
	return out
}

func (h *HigherOrder) withChildren(kids []Expr) Expr {
	c := *h
	c.Args = kids[:len(h.Args)]
	c.Fns = make([]*LambdaFn, len(h.Fns))
	for i, f := range h.Fns {
		c.Fns[i] = &LambdaFn{Params: f.Params, Body: kids[len(h.Args)+i]}
	}
	return &c
}

func (h *HigherOrder) String() string { return render(h, false) }

func (h *HigherOrder) print(p *exprPrinter) {
	p.b.WriteString(h.Func + "(")
	for i, o := range h.Order {
		if i > 0 {
			p.b.WriteString(", ")
		}
		if o >= 0 {
			p.expr(h.Args[o])
			continue
		}
		f := h.Fns[-1-o]
		names := make([]string, len(f.Params))
		for k, v := range f.Params {
			names[k] = vector.QuoteIdent(v.Name)
		}
		if len(names) == 1 {
			p.b.WriteString(names[0])
		} else {
			p.b.WriteString("(" + strings.Join(names, ", ") + ")")
		}
		p.b.WriteString(" -> ")
		p.expr(f.Body)
	}
	p.b.WriteByte(')')
}

// toVector converts the call for vector.
func (h *HigherOrder) toVector(env *Env) (vector.Expr, error) {
	args := make([]vector.Expr, len(h.Args))
	for i, a := range h.Args {
		v, err := ToVectorExpr(a, env)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	fns := make([]*vector.Lambda, len(h.Fns))
	for i, f := range h.Fns {
		body, err := ToVectorExpr(f.Body, env)
		if err != nil {
			return nil, err
		}
		l := &vector.Lambda{Body: body, Outer: Columns(f.Body)}
		for _, p := range f.Params {
			l.Params = append(l.Params, p.Key)
		}
		fns[i] = l
	}
	return &vector.HigherOrder{Name: h.Func, Args: args, Fns: fns}, nil
}

// higherOrderFuncs are the functions that take lambdas, with the number
// of value arguments before the lambdas.
var higherOrderFuncs = map[string]bool{
	"transform": true, "filter": true, "exists": true, "forall": true, "aggregate": true, "reduce": true,
	"zip_with": true, "map_filter": true, "transform_keys": true, "transform_values": true,
}

// hasLambda reports whether a call has a lambda argument.
func hasLambda(f *sql.FuncCall) bool {
	for _, a := range f.Args {
		if _, ok := a.(*sql.Lambda); ok {
			return true
		}
	}
	return false
}

// higherOrder resolves a call of a higher-order function.
func (r *resolver) higherOrder(f *sql.FuncCall, name string) (Expr, error) {
	if name == "reduce" {
		name = "aggregate"
	}
	h := &HigherOrder{Func: name}
	var lambdas []*sql.Lambda
	for _, a := range f.Args {
		if l, ok := a.(*sql.Lambda); ok {
			h.Order = append(h.Order, -1-len(lambdas))
			lambdas = append(lambdas, l)
			continue
		}
		v, err := r.expr(a)
		if err != nil {
			return nil, err
		}
		h.Order = append(h.Order, len(h.Args))
		h.Args = append(h.Args, v)
	}
	bad := func(format string, args ...any) error {
		return errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %s: "+format, append([]any{sql.Format(f)}, args...)...)
	}
	arrayArg := func(i int) (*arrow.ListType, error) {
		if i >= len(h.Args) {
			return nil, bad("it needs an array argument.")
		}
		lt, ok := h.Args[i].DataType().(*arrow.ListType)
		if !ok {
			return nil, bad("argument %d requires the ARRAY type, however %s is of %s type.", i+1, h.Args[i], vector.TypeName(h.Args[i].DataType()))
		}
		return lt, nil
	}
	mapArg := func() (*arrow.MapType, error) {
		if len(h.Args) != 1 {
			return nil, bad("it needs one map argument.")
		}
		mt, ok := h.Args[0].DataType().(*arrow.MapType)
		if !ok {
			return nil, bad("argument 1 requires the MAP type, however %s is of %s type.", h.Args[0], vector.TypeName(h.Args[0].DataType()))
		}
		return mt, nil
	}
	want := func(nargs, nfns int) error {
		if len(h.Args) != nargs || len(lambdas) < nfns || len(lambdas) > nfns+boolInt(name == "aggregate") {
			return errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `%s` requires %d value and %d lambda arguments.", name, nargs, nfns)
		}
		return nil
	}
	bool0 := func(e Expr) error {
		if !isNullType(e.DataType()) && e.DataType().ID() != arrow.BOOL {
			return bad("the lambda must return a BOOLEAN, not %s.", vector.TypeName(e.DataType()))
		}
		return nil
	}
	switch name {
	case "transform", "filter", "exists", "forall":
		if err := want(1, 1); err != nil {
			return nil, err
		}
		lt, err := arrayArg(0)
		if err != nil {
			return nil, err
		}
		fn, err := r.lambda(lambdas[0], lt.Elem(), vector.Int32)
		if err != nil {
			return nil, err
		}
		h.Fns = []*LambdaFn{fn}
		switch name {
		case "transform":
			h.Type = vector.ListOf(fn.Body.DataType())
		case "filter":
			if err := bool0(fn.Body); err != nil {
				return nil, err
			}
			h.Type = lt
		default:
			if len(fn.Params) != 1 {
				return nil, bad("the lambda of %s takes one argument.", name)
			}
			if err := bool0(fn.Body); err != nil {
				return nil, err
			}
			h.Type = vector.Boolean
		}
	case "aggregate":
		if err := want(2, 1); err != nil {
			return nil, err
		}
		lt, err := arrayArg(0)
		if err != nil {
			return nil, err
		}
		acc := h.Args[1].DataType()
		merge, err := r.lambda(lambdas[0], acc, lt.Elem())
		if err != nil {
			return nil, err
		}
		if len(merge.Params) != 2 {
			return nil, bad("the merge lambda of aggregate takes two arguments.")
		}
		if !arrow.TypeEqual(merge.Body.DataType(), acc) && sameShape(merge.Body.DataType(), acc) {
			// Spark compares the two types structurally
			// (DataType.equalsStructurally): a struct built with other
			// field names, (acc.sum + x, acc.n + 1), is the accumulator's
			// type, which keeps the initial value's names.
			merge.Body = castTo(merge.Body, acc)
		}
		if !arrow.TypeEqual(merge.Body.DataType(), acc) {
			c, ok := commonType([]arrow.DataType{merge.Body.DataType(), acc})
			if !ok || !vector.IsNumeric(c) {
				return nil, bad("the merge lambda returns %s, which is not the type %s of the initial value.", vector.TypeName(merge.Body.DataType()), vector.TypeName(acc))
			}
			// Spark widens the initial value so that merge keeps one type.
			h.Args[1] = castTo(h.Args[1], c)
			if merge, err = r.lambda(lambdas[0], c, lt.Elem()); err != nil {
				return nil, err
			}
			if !arrow.TypeEqual(merge.Body.DataType(), c) {
				merge.Body = castTo(merge.Body, c)
			}
			acc = c
		}
		h.Fns = []*LambdaFn{merge}
		h.Type = acc
		if len(lambdas) == 2 {
			finish, err := r.lambda(lambdas[1], acc)
			if err != nil {
				return nil, err
			}
			h.Fns = append(h.Fns, finish)
			h.Type = finish.Body.DataType()
		}
	case "zip_with":
		if err := want(2, 1); err != nil {
			return nil, err
		}
		a, err := arrayArg(0)
		if err != nil {
			return nil, err
		}
		b, err := arrayArg(1)
		if err != nil {
			return nil, err
		}
		fn, err := r.lambda(lambdas[0], a.Elem(), b.Elem())
		if err != nil {
			return nil, err
		}
		h.Fns = []*LambdaFn{fn}
		h.Type = vector.ListOf(fn.Body.DataType())
	case "map_filter", "transform_keys", "transform_values":
		if err := want(1, 1); err != nil {
			return nil, err
		}
		mt, err := mapArg()
		if err != nil {
			return nil, err
		}
		fn, err := r.lambda(lambdas[0], mt.KeyType(), mt.ItemType())
		if err != nil {
			return nil, err
		}
		h.Fns = []*LambdaFn{fn}
		switch name {
		case "map_filter":
			if err := bool0(fn.Body); err != nil {
				return nil, err
			}
			h.Type = mt
		case "transform_keys":
			if isNullType(fn.Body.DataType()) || fn.Body.DataType().ID() == arrow.MAP {
				return nil, bad("the keys cannot be of type %s.", vector.TypeName(fn.Body.DataType()))
			}
			h.Type = vector.MapOf(fn.Body.DataType(), mt.ItemType())
		default:
			h.Type = vector.MapOf(mt.KeyType(), fn.Body.DataType())
		}
	}
	return h, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lambda resolves a lambda whose parameters have the given types (a
// lambda may take fewer parameters than offered, not more).
func (r *resolver) lambda(l *sql.Lambda, types ...arrow.DataType) (*LambdaFn, error) {
	if len(l.Params) > len(types) {
		return nil, errorAt(l.Pos, ErrType, "[INVALID_LAMBDA_FUNCTION_CALL.NUM_ARGS_MISMATCH] A higher order function expects %d arguments, but got %d.", len(types), len(l.Params))
	}
	fn := &LambdaFn{}
	vars := map[string]*LambdaVar{}
	for i, p := range l.Params {
		key := strings.ToLower(p.Name)
		if _, dup := vars[key]; dup {
			return nil, errorAt(p.Pos, ErrType, "[INVALID_LAMBDA_FUNCTION_CALL.DUPLICATE_ARG_NAMES] The lambda function has duplicate arguments %s.", backquote(p.Name))
		}
		v := &LambdaVar{Name: p.Name, Key: fmt.Sprintf("%s#λ%d:%d", p.Name, l.Pos.Line, l.Pos.Col), Type: types[i]}
		vars[key] = v
		fn.Params = append(fn.Params, v)
	}
	sub := *r
	sub.special = make(map[sql.Expr]Expr, len(r.special)+4)
	for k, v := range r.special {
		sub.special[k] = v
	}
	var err error
	sql.Inspect(l.Body, func(n sql.Node) bool {
		c, ok := n.(*sql.ColumnRef)
		if !ok || err != nil {
			return err == nil
		}
		v, ok := vars[strings.ToLower(c.Parts[0].Name)]
		if !ok {
			return true
		}
		var e Expr = v
		for _, part := range c.Parts[1:] {
			if e, err = fieldAccess(e, part); err != nil {
				return false
			}
		}
		sub.special[c] = e
		return true
	})
	if err != nil {
		return nil, err
	}
	body, err := sub.expr(l.Body)
	if err != nil {
		return nil, err
	}
	fn.Body = body
	return fn, nil
}

// sameShape is Spark's DataType.equalsStructurally ignoring nullability:
// the same types, nested alike, whatever the names of struct fields.
func sameShape(a, b arrow.DataType) bool {
	a, b = vector.Unwrap(a), vector.Unwrap(b)
	if a.ID() != b.ID() {
		return false
	}
	switch x := a.(type) {
	case *arrow.StructType:
		y := b.(*arrow.StructType)
		if x.NumFields() != y.NumFields() {
			return false
		}
		for i := range x.Fields() {
			if !sameShape(x.Field(i).Type, y.Field(i).Type) {
				return false
			}
		}
		return true
	case *arrow.ListType:
		return sameShape(x.Elem(), b.(*arrow.ListType).Elem())
	case *arrow.MapType:
		y := b.(*arrow.MapType)
		return sameShape(x.KeyType(), y.KeyType()) && sameShape(x.ItemType(), y.ItemType())
	}
	return arrow.TypeEqual(a, b)
}
