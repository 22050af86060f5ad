package vector

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Higher-order functions evaluate their lambda's body once per batch over
// every element of the batch's arrays: the elements (and, for (x, i) ->,
// their positions) become columns appended to the input's columns, the
// input columns the body reads are gathered once per element, and the body
// is an ordinary expression over that record. aggregate, whose merge is
// sequential within an array, runs one vectorized step per element
// position over all the arrays still that long.

// LambdaVar is a lambda parameter: the column Name of the record the
// lambda's body is evaluated over.
type LambdaVar struct {
	Name string
	Type arrow.DataType
}

func (v *LambdaVar) String() string { return QuoteIdent(v.Name) }

// Bind implements Expr: the parameter is the last column of in so named.
func (v *LambdaVar) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	for i := in.NumFields() - 1; i >= 0; i-- {
		if in.Field(i).Name == v.Name {
			return (&ColumnAt{Index: i, Name: v.Name}).Bind(in, mem)
		}
	}
	return nil, newBindError(v, in, fmt.Errorf("lambda variable %s outside its lambda: %w", v.Name, ErrUnknownColumn))
}

// lambdaMark is in the name of every lambda parameter column (the planner
// names them x#λline:col).
const lambdaMark = "#λ"

// Lambda is a lambda argument: Params are the names of its LambdaVars,
// Outer the input columns its body reads.
type Lambda struct {
	Params []string
	Body   Expr
	Outer  []int
}

// HigherOrder is a call of a higher-order function (transform, filter,
// exists, forall, aggregate, zip_with, map_filter, transform_keys,
// transform_values) with its value arguments and lambdas.
type HigherOrder struct {
	Name string
	Args []Expr
	Fns  []*Lambda
}

func (h *HigherOrder) String() string {
	s := h.Name + "("
	for i, a := range h.Args {
		if i > 0 {
			s += ", "
		}
		s += a.String()
	}
	for _, f := range h.Fns {
		s += ", lambda(" + f.Body.String() + ")"
	}
	return s + ")"
}

// boundLambda is a lambda bound against its record's schema.
type boundLambda struct {
	schema *arrow.Schema
	body   Evaluator
	outer  []int
	params int
}

// bindLambda binds fn over in's columns (those the body does not read as
// NULL-typed placeholders) followed by its parameters of types.
func bindLambda(fn *Lambda, in *arrow.Schema, mem memory.Allocator, types []arrow.DataType) (*boundLambda, error) {
	if len(fn.Params) > len(types) {
		return nil, fmt.Errorf("the lambda takes %d arguments, at most %d are given: %w", len(fn.Params), len(types), ErrType)
	}
	used := map[int]bool{}
	for _, c := range fn.Outer {
		used[c] = true
	}
	for i, f := range in.Fields() {
		if strings.Contains(f.Name, lambdaMark) {
			used[i] = true // an enclosing lambda's parameter
		}
	}
	fields := make([]arrow.Field, 0, in.NumFields()+len(fn.Params))
	for i, f := range in.Fields() {
		if !used[i] {
			f = arrow.Field{Name: f.Name, Type: Null, Nullable: true}
		}
		fields = append(fields, f)
	}
	for i, p := range fn.Params {
		fields = append(fields, arrow.Field{Name: p, Type: types[i], Nullable: true})
	}
	schema := arrow.NewSchema(fields, nil)
	body, err := fn.Body.Bind(schema, mem)
	if err != nil {
		return nil, err
	}
	outer := make([]int, 0, len(used))
	for i := range in.Fields() {
		if used[i] {
			outer = append(outer, i)
		}
	}
	return &boundLambda{schema: schema, body: body, outer: outer, params: len(fn.Params)}, nil
}

// eval evaluates the body over m elements: rows[j] is the input row of
// element j, params the parameter columns (m values each; extra ones are
// ignored).
func (l *boundLambda) eval(ctx context.Context, mem memory.Allocator, rec arrow.Record, rows []int32, params []arrow.Array) (arrow.Array, error) {
	m := len(rows)
	cols := make([]arrow.Array, 0, len(l.schema.Fields()))
	var owned []arrow.Array
	defer func() { releaseArrays(owned) }()
	used := map[int]bool{}
	for _, c := range l.outer {
		used[c] = true
	}
	for i := 0; i < int(rec.NumCols()); i++ {
		if !used[i] {
			a := array.NewNull(m)
			owned = append(owned, a)
			cols = append(cols, a)
			continue
		}
		a, err := Take(mem, rec.Column(i), rows)
		if err != nil {
			return nil, err
		}
		owned = append(owned, a)
		cols = append(cols, a)
	}
	cols = append(cols, params[:l.params]...)
	lrec := array.NewRecord(l.schema, cols, int64(m))
	defer lrec.Release()
	return l.body.Eval(ctx, lrec)
}

// Bind implements Expr.
func (h *HigherOrder) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	args, err := bindAll(in, mem, h.Args)
	if err != nil {
		return nil, err
	}
	ev := &hofEval{name: h.Name, args: args, mem: mem, expr: h.String()}
	fail := func(err error) (Evaluator, error) { return nil, newBindError(h, in, err) }
	switch h.Name {
	case "transform", "filter", "exists", "forall":
		lt, ok := Unwrap(args[0].DataType()).(*arrow.ListType)
		if !ok || len(h.Fns) != 1 {
			return fail(fmt.Errorf("%s needs an array and a lambda: %w", h.Name, ErrType))
		}
		if ev.fns, err = bindLambdas(h.Fns, in, mem, [][]arrow.DataType{{lt.Elem(), Int32}}); err != nil {
			return nil, err
		}
		switch h.Name {
		case "transform":
			ev.dt = ListOf(ev.fns[0].body.DataType())
		case "filter":
			ev.dt = lt
		default:
			ev.dt = Boolean
		}
	case "zip_with":
		a, ok1 := Unwrap(args[0].DataType()).(*arrow.ListType)
		b, ok2 := Unwrap(args[1].DataType()).(*arrow.ListType)
		if !ok1 || !ok2 || len(h.Fns) != 1 {
			return fail(fmt.Errorf("zip_with needs two arrays and a lambda: %w", ErrType))
		}
		if ev.fns, err = bindLambdas(h.Fns, in, mem, [][]arrow.DataType{{a.Elem(), b.Elem()}}); err != nil {
			return nil, err
		}
		ev.dt = ListOf(ev.fns[0].body.DataType())
	case "map_filter", "transform_keys", "transform_values":
		mt, ok := Unwrap(args[0].DataType()).(*arrow.MapType)
		if !ok || len(h.Fns) != 1 {
			return fail(fmt.Errorf("%s needs a map and a lambda: %w", h.Name, ErrType))
		}
		if ev.fns, err = bindLambdas(h.Fns, in, mem, [][]arrow.DataType{{mt.KeyType(), mt.ItemType()}}); err != nil {
			return nil, err
		}
		switch h.Name {
		case "map_filter":
			ev.dt = mt
		case "transform_keys":
			ev.dt = MapOf(ev.fns[0].body.DataType(), mt.ItemType())
		default:
			ev.dt = MapOf(mt.KeyType(), ev.fns[0].body.DataType())
		}
	case "aggregate":
		lt, ok := Unwrap(args[0].DataType()).(*arrow.ListType)
		if !ok || len(h.Fns) < 1 || len(args) != 2 {
			return fail(fmt.Errorf("aggregate needs an array, an initial value and lambdas: %w", ErrType))
		}
		acc := Unwrap(args[1].DataType())
		types := [][]arrow.DataType{{acc, lt.Elem()}}
		if len(h.Fns) == 2 {
			types = append(types, []arrow.DataType{acc})
		}
		if ev.fns, err = bindLambdas(h.Fns, in, mem, types); err != nil {
			return nil, err
		}
		if !arrow.TypeEqual(ev.fns[0].body.DataType(), acc) {
			return fail(fmt.Errorf("aggregate: the merge lambda returns %s, not the accumulator's %s: %w", TypeName(ev.fns[0].body.DataType()), TypeName(acc), ErrType))
		}
		ev.dt = acc
		if len(ev.fns) == 2 {
			ev.dt = ev.fns[1].body.DataType()
		}
	default:
		return fail(fmt.Errorf("%w: %s", ErrUnknownFunction, h.Name))
	}
	return ev, nil
}

func bindLambdas(fns []*Lambda, in *arrow.Schema, mem memory.Allocator, types [][]arrow.DataType) ([]*boundLambda, error) {
	out := make([]*boundLambda, len(fns))
	for i, f := range fns {
		b, err := bindLambda(f, in, mem, types[i])
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

type hofEval struct {
	name string
	args []Evaluator
	fns  []*boundLambda
	dt   arrow.DataType
	mem  memory.Allocator
	expr string
}

func (e *hofEval) DataType() arrow.DataType { return e.dt }

func (e *hofEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := evalPlain(ctx, e.mem, e.args, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	n := int(rec.NumRows())
	switch e.name {
	case "zip_with":
		return e.zipWith(ctx, rec, arrs, n)
	case "aggregate":
		return e.aggregate(ctx, rec, arrs, n)
	}
	lv, ok := viewList(arrs[0])
	if !ok {
		return array.MakeArrayOfNull(e.mem, e.dt, n), nil
	}
	// The elements of the batch, rows[j] the row of element j.
	lo, hi := lv.offs[0], lv.offs[n]
	budget := newElemBudget(ctx)
	rows, err := elemRowsContext(ctx, budget, lv, n)
	if err != nil {
		return nil, err
	}
	m, isMap := arrs[0].(*array.Map)
	piece := func(a, z int) ([]arrow.Array, error) {
		if isMap {
			return []arrow.Array{
				array.NewSlice(m.Keys(), int64(lo)+int64(a), int64(lo)+int64(z)),
				array.NewSlice(m.Items(), int64(lo)+int64(a), int64(lo)+int64(z)),
			}, nil
		}
		x := array.NewSlice(lv.values, int64(lo)+int64(a), int64(lo)+int64(z))
		if e.fns[0].params < 2 {
			return []arrow.Array{x}, nil // the lambda does not take positions
		}
		return []arrow.Array{x, positionColumn(e.mem, lv, rows, a, z)}, nil
	}
	res, err := e.fns[0].evalChunked(ctx, e.mem, rec, rows, piece)
	if err != nil {
		return nil, err
	}
	defer res.Release()
	switch e.name {
	case "transform":
		offs, valid, nulls := rowShape(lv, n)
		return buildList(e.mem, e.dt, offs, valid, nulls, res), nil
	case "filter", "map_filter":
		keep, _ := res.(*array.Boolean)
		out, err := newListOutContext(ctx, n, int(hi-lo))
		if err != nil {
			return nil, err
		}
		for r := 0; r < n; r++ {
			if err := budget.spend(1); err != nil {
				return nil, err
			}
			if !lv.valid(r) {
				out.nullRow()
				continue
			}
			err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(j0, j1 int32) {
				if keep == nil {
					return
				}
				for j := j0; j < j1; j++ {
					if keep.IsValid(int(j-lo)) && keep.Value(int(j-lo)) {
						out.idx = append(out.idx, j)
					}
				}
			})
			if err != nil {
				return nil, err
			}
			out.endRow(true)
		}
		if e.name == "filter" {
			return out.buildContext(ctx, e.mem, e.dt, lv.values)
		}
		k, err := takeContext(ctx, e.mem, m.Keys(), out.idx)
		if err != nil {
			return nil, err
		}
		defer k.Release()
		v, err := takeContext(ctx, e.mem, m.Items(), out.idx)
		if err != nil {
			return nil, err
		}
		defer v.Release()
		return buildMap(e.mem, e.dt.(*arrow.MapType), out.offs, out.valid, out.nulls, k, v), nil
	case "exists", "forall":
		return e.quantify(budget, lv, res, n)
	case "transform_keys", "transform_values":
		offs, valid, nulls := rowShape(lv, n)
		k := array.NewSlice(m.Keys(), int64(lo), int64(hi))
		defer k.Release()
		v := array.NewSlice(m.Items(), int64(lo), int64(hi))
		defer v.Release()
		if e.name == "transform_keys" {
			if res.NullN() > 0 {
				return nil, &EvalError{Expr: e.expr, Err: fmt.Errorf("[NULL_MAP_KEY] Cannot use null as map key: %w", ErrInvalidInput)}
			}
			if err := checkDuplicateKeys(e.mem, res, offs); err != nil {
				return nil, err
			}
			return buildMap(e.mem, e.dt.(*arrow.MapType), offs, valid, nulls, res, v), nil
		}
		return buildMap(e.mem, e.dt.(*arrow.MapType), offs, valid, nulls, k, res), nil
	}
	return nil, fmt.Errorf("vector: higher-order function %s: %w", e.name, ErrUnknownFunction)
}

// quantify is exists (true if the predicate holds for an element, else
// NULL if it is NULL for one, else false) and forall (false if it fails
// for one, else NULL if it is NULL for one, else true).
// The elements are read in pieces through budget.
func (e *hofEval) quantify(budget *elemBudget, lv listView, res arrow.Array, n int) (arrow.Array, error) {
	lo := lv.offs[0]
	pred, _ := res.(*array.Boolean)
	all := e.name == "forall"
	b := array.NewBooleanBuilder(e.mem)
	defer b.Release()
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) {
			b.AppendNull()
			continue
		}
		decided, sawNull := false, false
		for a := lv.offs[r]; a < lv.offs[r+1] && !decided; {
			z := min(lv.offs[r+1], a+cancelCheckRows)
			for j := a; j < z; j++ {
				k := int(j - lo)
				if pred == nil || pred.IsNull(k) {
					sawNull = true
					continue
				}
				if pred.Value(k) != all {
					decided = true
					break
				}
			}
			if err := budget.spend(int(z - a)); err != nil {
				return nil, err
			}
			a = z
		}
		switch {
		case decided:
			b.Append(!all)
		case sawNull:
			b.AppendNull()
		default:
			b.Append(all)
		}
	}
	return b.NewArray(), nil
}

// zipWith merges two arrays element by element, the shorter padded with
// NULLs.
func (e *hofEval) zipWith(ctx context.Context, rec arrow.Record, arrs []arrow.Array, n int) (arrow.Array, error) {
	a, ok1 := viewList(arrs[0])
	b, ok2 := viewList(arrs[1])
	if !ok1 || !ok2 {
		return array.MakeArrayOfNull(e.mem, e.dt, n), nil
	}
	total := 0
	for r := 0; r < n; r++ {
		if a.valid(r) && b.valid(r) {
			total += max(a.size(r), b.size(r))
		}
	}
	rows, err := makeContext[int32](ctx, total, total)
	if err != nil {
		return nil, err
	}
	offs := make([]int32, n+1)
	valid := make([]bool, n)
	nulls := 0
	budget := newElemBudget(ctx)
	at := int32(0)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !a.valid(r) || !b.valid(r) {
			nulls++
			offs[r+1] = at
			continue
		}
		valid[r] = true
		size := int32(max(a.size(r), b.size(r)))
		err := budget.eachPiece(at, at+size, func(j0, j1 int32) {
			fill := rows[j0:j1]
			for k := range fill {
				fill[k] = int32(r)
			}
		})
		if err != nil {
			return nil, err
		}
		at += size
		offs[r+1] = at
	}
	// A piece's elements are gathered from both arrays, -1 (NULL) past
	// the shorter one's end.
	piece := func(p0, p1 int) ([]arrow.Array, error) {
		ai := make([]int32, p1-p0)
		bi := make([]int32, p1-p0)
		for k := range ai {
			r := int(rows[p0+k])
			j := p0 + k - int(offs[r])
			ai[k], bi[k] = elemAt(a, r, j), elemAt(b, r, j)
		}
		x, err := Take(e.mem, a.values, ai)
		if err != nil {
			return nil, err
		}
		y, err := Take(e.mem, b.values, bi)
		if err != nil {
			x.Release()
			return nil, err
		}
		return []arrow.Array{x, y}, nil
	}
	res, err := e.fns[0].evalChunked(ctx, e.mem, rec, rows, piece)
	if err != nil {
		return nil, err
	}
	defer res.Release()
	return buildList(e.mem, e.dt, offs, valid, nulls, res), nil
}

// elemAt is the child index of element j of row r, or -1 past its end.
func elemAt(v listView, r, j int) int32 {
	if j < v.size(r) {
		return v.offs[r] + int32(j)
	}
	return -1
}

// aggregate folds each array with the merge lambda, one vectorized step
// per element position over the arrays that reach it, then applies the
// finish lambda.
func (e *hofEval) aggregate(ctx context.Context, rec arrow.Record, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	acc := arrs[1]
	acc.Retain()
	defer func() { acc.Release() }()
	longest := 0
	if ok {
		for r := 0; r < n; r++ {
			if lv.valid(r) {
				longest = max(longest, lv.size(r))
			}
		}
	}
	for k := 0; k < longest; k++ {
		// A step costs a few allocations whatever its width: ctx is read
		// at every one (evalChunked), so that one array of millions of
		// elements, a step per element, stops at once.
		var rows, elems []int32
		for r := 0; r < n; r++ {
			if lv.valid(r) && lv.size(r) > k {
				rows = append(rows, int32(r))
				elems = append(elems, lv.offs[r]+int32(k))
			}
		}
		merged, err := e.fns[0].evalChunked(ctx, e.mem, rec, rows, func(a, z int) ([]arrow.Array, error) {
			accRows, err := Take(e.mem, acc, rows[a:z])
			if err != nil {
				return nil, err
			}
			x, err := Take(e.mem, lv.values, elems[a:z])
			if err != nil {
				accRows.Release()
				return nil, err
			}
			return []arrow.Array{accRows, x}, nil
		})
		if err != nil {
			return nil, err
		}
		// The new accumulator: merged values for the rows that stepped,
		// the old ones for the others.
		both, err := concatArrays(e.mem, []arrow.Array{acc, merged})
		merged.Release()
		if err != nil {
			return nil, err
		}
		idx := make([]int32, n)
		for r := range idx {
			idx[r] = int32(r)
		}
		for i, r := range rows {
			idx[r] = int32(n + i)
		}
		next, err := Take(e.mem, both, idx)
		both.Release()
		if err != nil {
			return nil, err
		}
		acc.Release()
		acc = next
	}
	// A NULL array gives NULL.
	idx := make([]int32, n)
	for r := range idx {
		idx[r] = int32(r)
		if !ok || !lv.valid(r) {
			idx[r] = -1
		}
	}
	result, err := Take(e.mem, acc, idx)
	if err != nil {
		return nil, err
	}
	if len(e.fns) == 1 {
		return result, nil
	}
	defer result.Release()
	rows := make([]int32, n)
	for r := range rows {
		rows[r] = int32(r)
	}
	return e.fns[1].evalChunked(ctx, e.mem, rec, rows, func(a, z int) ([]arrow.Array, error) {
		return []arrow.Array{array.NewSlice(result, int64(a), int64(z))}, nil
	})
}

// int32Column builds an INT column of vals.
func int32Column(mem memory.Allocator, vals []int32) arrow.Array {
	buf, out := fnFixedBuf[int32](mem, len(vals))
	copy(out, vals)
	return fnNewArray(Int32, len(vals), []*memory.Buffer{nil, buf}, nil, 0)
}
