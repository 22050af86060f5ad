package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The collection functions over ARRAY columns. Each kernel walks the
// element ranges of a whole column, decides which child elements each
// output row keeps (hash sets of normalized element keys for equality,
// typed comparators for order), and gathers them with one Take.

// arrayKernel computes a function over its evaluated (plain) arguments.
type arrayKernel func(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error)

// arrayKernelContext is an arrayKernel that checks ctx while it builds:
// one whose output can hold far more elements than its input has rows
// (sequence), so that a cancelled query does not wait for a whole
// batch's arrays.
type arrayKernelContext func(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error)

type arrayFnEval struct {
	name string
	args []Evaluator
	dt   arrow.DataType
	mem  memory.Allocator
	mode EvalMode
	expr string
	kern arrayKernel
	// kernCtx, when set, is used instead of kern.
	kernCtx arrayKernelContext
}

func (e *arrayFnEval) DataType() arrow.DataType { return e.dt }

func (e *arrayFnEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := evalPlain(ctx, e.mem, e.args, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	if e.kernCtx != nil {
		return e.kernCtx(ctx, e, arrs, int(rec.NumRows()))
	}
	return e.kern(e, arrs, int(rec.NumRows()))
}

// rowErr is the runtime error of row r.
func (e *arrayFnEval) rowErr(r int, err error) error {
	return &EvalError{Expr: e.expr, Row: r, Err: err}
}

// arrayTyper checks a function's argument types and picks its result type
// and kernel.
type arrayTyper func(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error)

// arrayFunc registers a collection function.
func arrayFunc(name string, min, max int, typer arrayTyper) funcSpec {
	return funcSpec{min, max, func(a []Expr) Expr {
		return &FuncExpr{Name: name, Args: a, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
			dt, k, err := typer(f, args)
			if err != nil {
				return nil, err
			}
			ev := &arrayFnEval{name: f.Name, args: args, dt: dt, mem: mem, mode: f.Mode, expr: f.String(), kern: k}
			return fnFoldConstant(f, in, mem, ev, args...)
		}}
	}}
}

// arrayFuncContext registers a collection function whose kernel checks
// the context (arrayKernelContext).
func arrayFuncContext(name string, min, max int, typer func(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error)) funcSpec {
	return funcSpec{min, max, func(a []Expr) Expr {
		return &FuncExpr{Name: name, Args: a, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
			dt, k, err := typer(f, args)
			if err != nil {
				return nil, err
			}
			ev := &arrayFnEval{name: f.Name, args: args, dt: dt, mem: mem, mode: f.Mode, expr: f.String(), kernCtx: k}
			return fnFoldConstant(f, in, mem, ev, args...)
		}}
	}}
}

// listArg is argument i's ARRAY type, or an error naming the function.
func listArg(f *FuncExpr, args []Evaluator, i int) (*arrow.ListType, error) {
	t, ok := Unwrap(args[i].DataType()).(*arrow.ListType)
	if !ok {
		return nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] argument %d of %s requires the ARRAY type, however %s has the type %s: %w", i+1, f.Name, f.Args[i], TypeName(args[i].DataType()), ErrType)
	}
	return t, nil
}

// sameElemArgs checks that every argument is an ARRAY of one element type.
func sameElemArgs(f *FuncExpr, args []Evaluator) (*arrow.ListType, error) {
	var lt *arrow.ListType
	for i := range args {
		t, err := listArg(f, args, i)
		if err != nil {
			return nil, err
		}
		if lt != nil && !arrow.TypeEqual(lt, t) {
			return nil, fmt.Errorf("[DATATYPE_MISMATCH.DATA_DIFF_TYPES] the arguments of %s should all be arrays of the same type, got %s and %s: %w", f.Name, TypeName(lt), TypeName(t), ErrType)
		}
		lt = t
	}
	return lt, nil
}

// nullList is an all-NULL column of type dt (a NULL-typed argument).
func nullList(e *arrayFnEval, n int) arrow.Array { return array.MakeArrayOfNull(e.mem, e.dt, n) }

// --- set operations: array_distinct, array_union, array_intersect, array_except ---

func typeSetOp(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	lt, err := sameElemArgs(f, args)
	if err != nil {
		return nil, nil, err
	}
	return lt, kernSetOp, nil
}

// kernSetOp keeps, in order of first appearance, the distinct elements
// of a (array_distinct), of a then b (array_union), of a that are in b
// (array_intersect) or not in b (array_except). NULL is one element.
// It checks ctx as it goes (array_chunks.go).
func kernSetOp(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	name := e.name
	var views []listView
	for _, a := range arrs {
		lv, ok := viewList(a)
		if !ok {
			return nullList(e, n), nil
		}
		views = append(views, lv)
	}
	// One child column holds every input's elements, so that one key
	// encoding and one Take serve all of them.
	children := make([]arrow.Array, len(views))
	base := make([]int32, len(views))
	total := int32(0)
	for i, v := range views {
		children[i], base[i] = v.values, total
		total += int32(v.values.Len())
	}
	all, err := concatArraysContext(ctx, e, children)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	ek, err := newElemKeys(e.mem, all.DataType())
	if err != nil {
		return nil, err
	}
	defer ek.release()
	if err := ek.encodeContext(ctx, all); err != nil {
		return nil, err
	}
	seen, other := newElemSet(ek, e.mem, name), newElemSet(ek, e.mem, name)
	defer seen.release()
	defer other.release()
	maxOut := elemSpan(views[0])
	if name == "array_union" {
		maxOut += elemSpan(views[1])
	}
	out, err := newListOutContext(ctx, n, maxOut)
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		valid := true
		for _, v := range views {
			valid = valid && v.valid(r)
		}
		if !valid {
			out.nullRow()
			continue
		}
		a := views[0]
		room := int(a.offs[r+1] - a.offs[r])
		if name == "array_union" {
			room += int(views[1].offs[r+1] - views[1].offs[r])
		}
		if err := seen.prepare(ctx, room); err != nil {
			return nil, err
		}
		switch name {
		case "array_distinct", "array_union":
			for k, v := range views {
				err := budget.eachPiece(v.offs[r], v.offs[r+1], func(j0, j1 int32) {
					for j := j0; j < j1; j++ {
						if g := base[k] + j; seen.add(int(g)) {
							out.idx = append(out.idx, g)
						}
					}
				})
				if err != nil {
					return nil, err
				}
			}
		default: // array_intersect, array_except
			b := views[1]
			if err := other.prepare(ctx, int(b.offs[r+1]-b.offs[r])); err != nil {
				return nil, err
			}
			err := budget.eachPiece(b.offs[r], b.offs[r+1], func(j0, j1 int32) {
				for j := j0; j < j1; j++ {
					other.add(int(base[1] + j))
				}
			})
			if err != nil {
				return nil, err
			}
			keep := name == "array_intersect"
			err = budget.eachPiece(a.offs[r], a.offs[r+1], func(j0, j1 int32) {
				for j := j0; j < j1; j++ {
					g := int(base[0] + j)
					in := false
					if ek.null(g) {
						in = other.null
					} else {
						in = other.has(ek, g)
					}
					if in == keep && seen.add(g) {
						out.idx = append(out.idx, int32(g))
					}
				}
			})
			if err != nil {
				return nil, err
			}
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, all)
}

// --- shape: reverse, slice, flatten, concat, array_repeat, array_compact ---

func typeArrayArg(k arrayKernelContext) func(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	return func(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
		lt, err := listArg(f, args, 0)
		if err != nil {
			return nil, nil, err
		}
		return lt, k, nil
	}
}

// kernReverse reverses each array.
func kernReverse(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	out, err := newListOutContext(ctx, n, elemSpan(lv))
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) {
			out.nullRow()
			continue
		}
		// Pieces of the row's positions counted from its end.
		first, last := lv.offs[r], lv.offs[r+1]-1
		err := budget.eachPiece(0, last-first+1, func(k0, k1 int32) {
			for j := last - k0; j > last-k1; j-- {
				out.idx = append(out.idx, j)
			}
		})
		if err != nil {
			return nil, err
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, lv.values)
}

// kernCompact is array_compact: the array without its NULL elements.
func kernCompact(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	out, err := newListOutContext(ctx, n, elemSpan(lv))
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) {
			out.nullRow()
			continue
		}
		err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(j0, j1 int32) {
			for j := j0; j < j1; j++ {
				if lv.values.IsValid(int(j)) {
					out.idx = append(out.idx, j)
				}
			}
		})
		if err != nil {
			return nil, err
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, lv.values)
}

func typeSlice(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	lt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	for i := 1; i < 3; i++ {
		if t := Unwrap(args[i].DataType()); !IsIntegral(t) && t.ID() != arrow.NULL {
			return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] argument %d of slice requires the INT type, not %s: %w", i+1, TypeName(t), ErrType)
		}
	}
	return lt, kernSlice, nil
}

// kernSlice is slice(a, start, length): start counts from 1 (negative
// from the end); start 0 and a negative length are errors.
func kernSlice(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok || arrs[1].DataType().ID() == arrow.NULL || arrs[2].DataType().ID() == arrow.NULL {
		return nullList(e, n), nil
	}
	starts, lens := intReader(arrs[1]), intReader(arrs[2])
	out, err := newListOutContext(ctx, n, elemSpan(lv))
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) || arrs[1].IsNull(r) || arrs[2].IsNull(r) {
			out.nullRow()
			continue
		}
		start, length, size := starts(r), lens(r), int64(lv.size(r))
		switch {
		case start == 0:
			return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE.START] The value of parameter(s) `start` in `slice` is invalid: Expects a positive or a negative value for `start`, but got 0: %w", ErrInvalidInput))
		case length < 0:
			return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE.LENGTH] The value of parameter(s) `length` in `slice` is invalid: Expects `length` greater than or equal to 0, but got %d: %w", length, ErrInvalidInput))
		}
		from := start - 1
		if start < 0 {
			from = size + start
		}
		if from >= 0 && from < size {
			end := min(from+length, size)
			base := lv.offs[r]
			err := budget.eachPiece(base+int32(from), base+int32(end), func(j0, j1 int32) {
				for j := j0; j < j1; j++ {
					out.idx = append(out.idx, j)
				}
			})
			if err != nil {
				return nil, err
			}
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, lv.values)
}

func typeFlatten(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	lt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	inner, ok := lt.Elem().(*arrow.ListType)
	if !ok {
		return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] flatten needs an ARRAY of ARRAYs, not %s: %w", TypeName(lt), ErrType)
	}
	return inner, kernFlatten, nil
}

// kernFlatten concatenates the inner arrays of each row; a NULL inner
// array makes the row NULL.
func kernFlatten(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	inner, _ := viewList(lv.values)
	maxOut := 0
	if len(lv.offs) > 0 && len(inner.offs) > 0 {
		maxOut = int(inner.offs[lv.offs[n]] - inner.offs[lv.offs[0]])
	}
	out, err := newListOutContext(ctx, n, maxOut)
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		valid := lv.valid(r)
		start := len(out.idx)
		for j := lv.offs[r]; valid && j < lv.offs[r+1]; j++ {
			if !inner.valid(int(j)) {
				valid = false
				break
			}
			err := budget.eachPiece(inner.offs[j], inner.offs[j+1], func(k0, k1 int32) {
				for k := k0; k < k1; k++ {
					out.idx = append(out.idx, k)
				}
			})
			if err == nil {
				err = budget.spend(1) // the inner array, however short
			}
			if err != nil {
				return nil, err
			}
		}
		if !valid {
			out.idx = out.idx[:start]
		}
		out.endRow(valid)
	}
	return out.buildContext(ctx, e.mem, e.dt, inner.values)
}

// kernConcat is concat over arrays: NULL when any argument is NULL.
func kernConcat(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	var views []listView
	children := make([]arrow.Array, 0, len(arrs))
	base := make([]int32, 0, len(arrs))
	total := int32(0)
	for _, a := range arrs {
		lv, ok := viewList(a)
		if !ok {
			return nullList(e, n), nil
		}
		views = append(views, lv)
		children = append(children, lv.values)
		base = append(base, total)
		total += int32(lv.values.Len())
	}
	if len(views) == 0 {
		all := array.MakeArrayOfNull(e.mem, e.dt.(*arrow.ListType).Elem(), 0)
		defer all.Release()
		out := newListOut(n)
		for r := 0; r < n; r++ {
			out.endRow(true)
		}
		return out.build(e.mem, e.dt, all)
	}
	all, err := concatArraysContext(ctx, e, children)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	maxOut := 0
	for _, v := range views {
		maxOut += elemSpan(v)
	}
	out, err := newListOutContext(ctx, n, maxOut)
	if err != nil {
		return nil, err
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		valid := true
		for _, v := range views {
			valid = valid && v.valid(r)
		}
		if !valid {
			out.nullRow()
			continue
		}
		for k, v := range views {
			err := budget.eachPiece(v.offs[r], v.offs[r+1], func(j0, j1 int32) {
				for j := j0; j < j1; j++ {
					out.idx = append(out.idx, base[k]+j)
				}
			})
			if err != nil {
				return nil, err
			}
		}
		out.endRow(true)
	}
	return out.buildContext(ctx, e.mem, e.dt, all)
}

func typeRepeat(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	if t := Unwrap(args[1].DataType()); !IsIntegral(t) && t.ID() != arrow.NULL {
		return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] the count of array_repeat must be an INT, not %s: %w", TypeName(t), ErrType)
	}
	return ListOf(Unwrap(args[0].DataType())), kernRepeat, nil
}

// maxArrayLength is Spark's largest array (ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH).
const maxArrayLength = 2147483632

// kernRepeat is array_repeat(x, n): x n times (none for n <= 0). A row may
// ask for up to 1<<30 elements: the rows' sizes are found first (checking
// ctx every cancelCheckRows rows), then the element indices are listed and
// the elements gathered cancelCheckRows at a time with ctx checked
// between.
func kernRepeat(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	if arrs[1].DataType().ID() == arrow.NULL {
		return nullList(e, n), nil
	}
	counts := intReader(arrs[1])
	out := newListOut(n)
	total := int64(0)
	// The output is as large as the counts say, whatever the input's size
	// (array_repeat(1, 100000000) is 400 MB of element indices and 800 MB
	// of elements from two literals): its index list and its elements are
	// checked against the query's account before either is made.
	outBytes := int64(0)
	elemBytes := repeatElemBytes(arrs[0])
	for r := 0; r < n; r++ {
		if r%cancelCheckRows == cancelCheckRows-1 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if arrs[1].IsNull(r) {
			out.valid = append(out.valid, false)
			out.nulls++
			out.offs = append(out.offs, int32(total))
			continue
		}
		c := max(counts(r), 0)
		if c > maxArrayLength || total+c > 1<<30 {
			return nil, e.rowErr(r, fmt.Errorf("[COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER] Can't create array with %d elements which exceeding the array size limit %d: %w", c, maxArrayLength, ErrInvalidInput))
		}
		total += c
		outBytes += c * elemBytes(r) // at most 2^30 × 2^31 per row
		out.valid = append(out.valid, true)
		out.offs = append(out.offs, int32(total))
	}
	budget := newValueBudget(e.mem, "array_repeat")
	defer budget.release()
	if err := budget.scratch(total * 4); err != nil {
		return nil, err
	}
	if err := budget.output(outBytes + int64(n+1)*4); err != nil {
		return nil, err
	}
	idx, err := makeContext[int32](ctx, int(total), int(total))
	if err != nil {
		return nil, err
	}
	work := 0 // elements and rows listed since the last check of ctx
	for r := 0; r < n; r++ {
		if work++; work >= cancelCheckRows {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			work = 0
		}
		for k, end := int(out.offs[r]), int(out.offs[r+1]); k < end; {
			stop := min(end, k+cancelCheckRows-work)
			work += stop - k
			for ; k < stop; k++ {
				idx[k] = int32(r)
			}
			if work >= cancelCheckRows {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				work = 0
			}
		}
	}
	out.idx = idx
	return out.buildContext(ctx, e.mem, e.dt, arrs[0])
}

// repeatElemBytes returns the bytes one copy of row r's element takes in
// array_repeat's output: its value and offset for strings and binaries,
// its width for fixed-width types, 8 (a lower bound) for nested ones.
func repeatElemBytes(a arrow.Array) func(r int) int64 {
	if v, ok := a.(interface{ ValueLen(int) int }); ok {
		return func(r int) int64 { return int64(v.ValueLen(r)) + 4 }
	}
	if fw, ok := a.DataType().(arrow.FixedWidthDataType); ok {
		w := int64(max(fw.BitWidth()/8, 1))
		return func(int) int64 { return w }
	}
	return func(int) int64 { return 8 }
}

// --- array_join ---

func typeJoin(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	lt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	if !IsStringLike(lt.Elem()) && lt.Elem().ID() != arrow.NULL {
		return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] array_join needs an ARRAY<STRING>, not %s: %w", TypeName(lt), ErrType)
	}
	for i := 1; i < len(args); i++ {
		if t := Unwrap(args[i].DataType()); !IsStringLike(t) && t.ID() != arrow.NULL {
			return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] argument %d of array_join must be a STRING, not %s: %w", i+1, TypeName(t), ErrType)
		}
	}
	return String, kernJoin, nil
}

// kernJoin is array_join(a, delim[, nullReplacement]): NULL elements are
// skipped, or replaced when a replacement is given. A row's elements go in
// pieces of cancelCheckRows through the element budget.
func kernJoin(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok || arrs[1].DataType().ID() == arrow.NULL {
		return nullList(e, n), nil
	}
	vals, _ := lv.values.(*array.String)
	delims := arrs[1].(*array.String)
	var repl *array.String
	if len(arrs) == 3 {
		if arrs[2].DataType().ID() == arrow.NULL {
			return nullList(e, n), nil
		}
		repl = arrs[2].(*array.String)
	}
	b := array.NewStringBuilder(e.mem)
	defer b.Release()
	var buf []byte
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		if !lv.valid(r) || delims.IsNull(r) || repl != nil && repl.IsNull(r) {
			b.AppendNull()
			continue
		}
		buf = buf[:0]
		first := true
		err := budget.eachPiece(lv.offs[r], lv.offs[r+1], func(j0, j1 int32) {
			for j := j0; j < j1; j++ {
				var s string
				switch {
				case vals != nil && vals.IsValid(int(j)):
					s = vals.Value(int(j))
				case repl != nil:
					s = repl.Value(r)
				default:
					continue
				}
				if !first {
					buf = append(buf, delims.Value(r)...)
				}
				first = false
				buf = append(buf, s...)
			}
		})
		if err != nil {
			return nil, err
		}
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

// --- arrays_zip ---

// arrays_zip(a, b, ...) is per row an array of structs whose field k is
// the k-th array's element (NULL past the end of a shorter array), fields
// named 0, 1, ...; arrays_zip_named(name1, a, name2, b, ...) names them
// (the planner passes the columns' names, as Spark does).
func typeZip(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernelContext, error) {
	fields := make([]arrow.Field, len(args))
	for i := range args {
		lt, err := listArg(f, args, i)
		if err != nil {
			return nil, nil, err
		}
		fields[i] = arrow.Field{Name: fmt.Sprint(i), Type: lt.Elem(), Nullable: true}
	}
	return ListOf(arrow.StructOf(fields...)), kernZip, nil
}

// zipNamed is arrays_zip_named: the names are constant strings.
func zipNamed() funcSpec {
	return funcSpec{2, -1, func(a []Expr) Expr {
		return &FuncExpr{Name: "arrays_zip", Args: a, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
			if len(args)%2 != 0 {
				return nil, fmt.Errorf("arrays_zip_named needs name and array pairs: %w", ErrType)
			}
			fields := make([]arrow.Field, 0, len(args)/2)
			arrs := make([]Evaluator, 0, len(args)/2)
			for i := 0; i < len(args); i += 2 {
				v, _ := fnConstValue(args[i])
				name, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("arrays_zip_named: the names must be constant strings: %w", ErrType)
				}
				lt, err := listArg(f, args, i+1)
				if err != nil {
					return nil, err
				}
				fields = append(fields, arrow.Field{Name: name, Type: lt.Elem(), Nullable: true})
				arrs = append(arrs, args[i+1])
			}
			ev := &arrayFnEval{name: "arrays_zip", args: arrs, dt: ListOf(arrow.StructOf(fields...)), mem: mem, mode: f.Mode, expr: f.String(), kernCtx: kernZip}
			return fnFoldConstant(f, in, mem, ev, arrs...)
		}}
	}}
}

// A row's element indices are filled in pieces of cancelCheckRows through
// the element budget and gathered with takeContext.
func kernZip(ctx context.Context, e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	st := e.dt.(*arrow.ListType).Elem().(*arrow.StructType)
	views := make([]listView, len(arrs))
	for i, a := range arrs {
		lv, ok := viewList(a)
		if !ok {
			return nullList(e, n), nil
		}
		views[i] = lv
	}
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	// The rows' lengths first, so that the index lists are allocated once.
	for r := 0; r < n; r++ {
		ok := true
		longest := 0
		for _, v := range views {
			ok = ok && v.valid(r)
			if ok {
				longest = max(longest, v.size(r))
			}
		}
		if !ok {
			nulls++
			offs = append(offs, offs[len(offs)-1])
			continue
		}
		valid[r] = true
		offs = append(offs, offs[len(offs)-1]+int32(longest))
	}
	total := int(offs[n])
	idx := make([][]int32, len(arrs))
	for k := range idx {
		var err error
		if idx[k], err = makeContext[int32](ctx, total, total); err != nil {
			return nil, err
		}
	}
	budget := newElemBudget(ctx)
	for r := 0; r < n; r++ {
		if err := budget.spend(1); err != nil {
			return nil, err
		}
		for k, v := range views {
			size, base := int32(v.size(r)), v.offs[r]
			out := idx[k]
			err := budget.eachPiece(offs[r], offs[r+1], func(a, z int32) {
				for i := a; i < z; i++ {
					if j := i - offs[r]; j < size {
						out[i] = base + j
					} else {
						out[i] = -1
					}
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	fields := make([]arrow.Array, len(arrs))
	defer func() { releaseArrays(fields) }()
	children := make([]arrow.ArrayData, len(arrs))
	m := int(offs[len(offs)-1])
	for k, v := range views {
		f, err := takeContext(ctx, e.mem, v.values, idx[k])
		if err != nil {
			return nil, err
		}
		fields[k] = f
		children[k] = f.Data()
	}
	sd := array.NewData(st, m, []*memory.Buffer{nil}, children, 0, 0)
	defer sd.Release()
	sa := array.MakeFromData(sd)
	defer sa.Release()
	return buildList(e.mem, e.dt, offs, valid, nulls, sa), nil
}
