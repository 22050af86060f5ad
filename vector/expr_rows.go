package vector

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The row-kernel plumbing of the scalar functions added for issue #20
// (strings, binary, math, dates): bind converts every argument to one
// physical form (string or binary bytes, int64, float64) with Spark's
// implicit casts, Eval reads whole columns (a constant operand is never
// expanded, a dictionary is decoded once) and runs a typed kernel over the
// rows that are valid in every argument, writing straight into the result
// buffers. A kernel is a closure built at bind time (with its constant
// arguments already parsed: a charset, a regex, a unit), called once per
// row with no allocation.

// rowKind is the form a function reads an argument in.
type rowKind uint8

const (
	rowStr    rowKind = iota // string; atomic types cast to string
	rowBytes                 // string or binary as given; others cast to string
	rowBin                   // binary; strings cast to binary
	rowInt                   // integral, read as int64; strings cast to bigint
	rowFloat                 // numeric or string, read as double
	rowDate                  // date (days); strings and timestamps cast to date
	rowMicros                // timestamp or timestamp_ntz (microseconds); dates and strings cast to timestamp
	rowBool                  // boolean
)

// rowArg is one argument of a row kernel for one batch: a constant or a
// plain column.
type rowArg struct {
	constant bool
	null     bool // a NULL constant
	b        []byte
	offs     []int32
	data     []byte
	i        int64
	ints     []int64
	f        float64
	floats   []float64
	bools    *array.Boolean
	arr      arrow.Array // the plain column (owned), nil for a constant
}

func (a *rowArg) str(i int) []byte {
	if a.constant {
		return a.b
	}
	return a.data[a.offs[i]:a.offs[i+1]]
}

// valid reports whether row i of the argument is not NULL (for the
// arguments a function reads NULLs of itself).
func (a *rowArg) valid(i int) bool {
	if a.constant {
		return !a.null
	}
	return a.arr.IsValid(i)
}

func (a *rowArg) int(i int) int64 {
	if a.constant {
		return a.i
	}
	return a.ints[i]
}

func (a *rowArg) float(i int) float64 {
	if a.constant {
		return a.f
	}
	return a.floats[i]
}

func (a *rowArg) bool(i int) bool {
	if a.constant {
		return a.i != 0
	}
	return a.bools.Value(i)
}

// rowKernels are the per-row functions of a row evaluator; the one that
// matches the result type is set. ok false makes the row NULL.
type rowKernels struct {
	str  func(a []rowArg, i int, dst []byte) (out []byte, ok bool, err error)
	num  func(a []rowArg, i int) (v int64, ok bool, err error)
	flt  func(a []rowArg, i int) (v float64, ok bool, err error)
	bool func(a []rowArg, i int) (v bool, ok bool, err error)
	// size, when set, is an upper bound of the bytes of row i's str
	// value, computed without building it (repeat: n × len), so that
	// the output and the scratch are checked against the query's account
	// before they are allocated (expr_value_size.go). A bound over
	// maxValueBytes means the kernel refuses the row (it reports why).
	size func(a []rowArg, i int) int64
	// build, set instead of str for a value whose size is not known
	// before it is built (regexp_replace), appends row i's value to
	// out, asking out.room before each growth: the value is refused over
	// the query's limit as it grows, not after it is built.
	build func(a []rowArg, i int, out *valueBuf) (ok bool, err error)
}

// rowEval evaluates a row kernel over whole columns.
type rowEval struct {
	f     *FuncExpr
	args  []Evaluator
	kinds []rowKind
	dt    arrow.DataType
	mem   memory.Allocator
	k     rowKernels
	// lenient has bit k set when a NULL in argument k does not make the
	// row NULL (the kernel reads it with valid).
	lenient uint64
}

func (r *rowEval) DataType() arrow.DataType { return r.dt }

// rowCast converts ev to the physical form of kind with Spark's implicit
// casts (in the session's mode: an ANSI cast of bad text raises).
func rowCast(f *FuncExpr, k int, ev Evaluator, kind rowKind, mem memory.Allocator) (Evaluator, error) {
	dt := Unwrap(ev.DataType())
	what := f.Args[k].String()
	if dt.ID() == arrow.NULL {
		return ev, nil
	}
	var to arrow.DataType
	switch kind {
	case rowStr:
		if dt.ID() == arrow.BINARY {
			to = String
			break
		}
		return asStringArg(ev, mem, what)
	case rowBytes:
		if dt.ID() == arrow.BINARY {
			return Plain(ev, mem), nil
		}
		return asStringArg(ev, mem, what)
	case rowBin:
		to = Binary
	case rowInt:
		if IsIntegral(dt) {
			return Plain(ev, mem), nil
		}
		if !IsStringLike(dt) {
			return nil, fmt.Errorf("%s must be an integer, not %s: %w", what, TypeName(dt), ErrType)
		}
		to = Int64
	case rowFloat:
		if !IsNumeric(dt) && !IsStringLike(dt) {
			return nil, fmt.Errorf("%s must be a number, not %s: %w", what, TypeName(dt), ErrType)
		}
		to = Float64
	case rowDate:
		if dt.ID() != arrow.DATE32 && dt.ID() != arrow.TIMESTAMP && !IsStringLike(dt) {
			return nil, fmt.Errorf("%s must be a date, not %s: %w", what, TypeName(dt), ErrType)
		}
		to = Date
	case rowMicros:
		if dt.ID() == arrow.TIMESTAMP {
			return Plain(ev, mem), nil
		}
		if dt.ID() != arrow.DATE32 && !IsStringLike(dt) {
			return nil, fmt.Errorf("%s must be a timestamp, not %s: %w", what, TypeName(dt), ErrType)
		}
		to = Timestamp
	case rowBool:
		if dt.ID() != arrow.BOOL {
			return nil, fmt.Errorf("%s must be a boolean, not %s: %w", what, TypeName(dt), ErrType)
		}
		return Plain(ev, mem), nil
	}
	if arrow.TypeEqual(dt, to) {
		return Plain(ev, mem), nil
	}
	kern := castKernelFor(dt, to)
	if kern == nil {
		return nil, fmt.Errorf("%s cannot be converted to %s from %s: %w", what, TypeName(to), TypeName(dt), ErrType)
	}
	c := &castEval{child: ev, from: ev.DataType(), to: to, kern: kern, mem: mem, mode: f.Mode, loc: f.Loc,
		expr: "CAST(" + what + " AS " + sqlTypeName(to) + ")", operand: what}
	return foldQuietly(c, mem, ev), nil
}

// bindRows binds a row-kernel function: args are converted to kinds, a
// NULL constant argument makes the call the constant NULL of dt, and a
// call of constants is folded.
func bindRows(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator, kinds []rowKind, dt arrow.DataType, k rowKernels) (Evaluator, error) {
	return bindRowsLenient(f, in, mem, args, kinds, dt, k, 0)
}

// bindRowsLenient is bindRows where the arguments of the lenient mask do
// not make a row NULL by being NULL: the kernel decides.
func bindRowsLenient(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator, kinds []rowKind, dt arrow.DataType, k rowKernels, lenient uint64) (Evaluator, error) {
	conv, err := rowArgs(f, args, kinds, mem)
	if err != nil {
		return nil, err
	}
	for i, a := range conv {
		if lenient&(1<<i) == 0 && (a.DataType().ID() == arrow.NULL || isNullConst(a)) {
			return fnNullResult(dt, mem), nil
		}
	}
	ev := &rowEval{f: f, args: conv, kinds: kinds, dt: dt, mem: mem, k: k, lenient: lenient}
	// A constant call that fails (5 DIV 0 under ANSI) keeps its error for
	// run time, where a CASE may never evaluate it.
	return foldQuietly(ev, mem, conv...), nil
}

// rowArgs converts args to kinds (the last kind repeats for variadic
// functions).
func rowArgs(f *FuncExpr, args []Evaluator, kinds []rowKind, mem memory.Allocator) ([]Evaluator, error) {
	conv := make([]Evaluator, len(args))
	for i, a := range args {
		kind := kinds[min(i, len(kinds)-1)]
		c, err := rowCast(f, i, a, kind, mem)
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	return conv, nil
}

// constRowArg is a constant argument read in kind.
func constRowArg(v any, kind rowKind) rowArg {
	a := rowArg{constant: true, null: v == nil}
	switch x := v.(type) {
	case string:
		a.b = []byte(x)
	case []byte:
		a.b = x
	case bool:
		if x {
			a.i = 1
		}
	case float64:
		a.f = x
	case arrow.Date32:
		a.i = int64(x)
	case arrow.Timestamp:
		a.i = int64(x)
	default:
		a.i, _ = fnConstInt64(v)
		a.f = float64(a.i)
	}
	if kind == rowFloat {
		if i, ok := v.(int64); ok {
			a.f = float64(i)
		}
	}
	return a
}

// newRowArg reads a column in kind; the result owns a reference.
func newRowArg(mem memory.Allocator, arr arrow.Array, kind rowKind) (rowArg, error) {
	plain, err := DecodeDictionary(mem, arr)
	if err != nil {
		return rowArg{}, err
	}
	a := rowArg{arr: plain}
	switch plain.DataType().ID() {
	case arrow.STRING, arrow.BINARY:
		a.offs, a.data = fnBinaryView(plain)
	case arrow.FLOAT64:
		a.floats = fnRawValues[float64](plain)
	case arrow.FLOAT32:
		a.floats = make([]float64, plain.Len())
		for i, v := range fnRawValues[float32](plain) {
			a.floats[i] = float64(v)
		}
	case arrow.DATE32:
		a.ints = fnWidenInts(fnRawValues[int32](plain))
	case arrow.TIMESTAMP:
		a.ints = fnRawValues[int64](plain)
	case arrow.BOOL:
		a.bools = plain.(*array.Boolean)
	default:
		a.ints = fnInt64sOf(plain)
	}
	return a, nil
}

func (r *rowEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := fnEvalArgs(ctx, rec, r.args)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	a := make([]rowArg, len(r.args))
	defer func() {
		for i := range a {
			if a[i].arr != nil {
				a[i].arr.Release()
			}
		}
	}()
	for i, ev := range r.args {
		kind := r.kinds[min(i, len(r.kinds)-1)]
		if v, ok := fnConstValue(ev); ok {
			a[i] = constRowArg(v, kind)
			continue
		}
		if a[i], err = newRowArg(r.mem, arrs[i], kind); err != nil {
			return nil, err
		}
	}
	n := int(rec.NumRows())
	strict := arrs
	if r.lenient != 0 {
		strict = make([]arrow.Array, len(arrs))
		for i, arr := range arrs {
			if r.lenient&(1<<i) == 0 {
				strict[i] = arr
			}
		}
	}
	v := newValidityOut(r.mem, n, strict...)
	switch {
	case r.k.str != nil || r.k.build != nil:
		return r.evalStr(a, n, v)
	case r.k.bool != nil:
		return r.evalBool(a, n, v)
	case r.k.flt != nil:
		return r.evalFloat(a, n, v)
	}
	return r.evalNum(a, n, v)
}

// rowError is the runtime error of row i, naming the operands.
func (r *rowEval) rowError(a []rowArg, i int, err error) error {
	vals := make([]string, len(a))
	for k := range a {
		var val any
		if a[k].constant {
			val, _ = fnConstValue(r.args[k])
		} else {
			val = ValueAt(a[k].arr, i)
		}
		vals[k] = r.f.Args[k].String() + "=" + FormatValue(val, r.args[k].DataType())
	}
	return &EvalError{Expr: r.f.String(), Row: i, Values: strings.Join(vals, ", "), Err: err}
}

func (r *rowEval) evalStr(a []rowArg, n int, v *validityOut) (arrow.Array, error) {
	budget := newValueBudget(r.mem, r.f.Name)
	defer budget.release()
	// The first string argument's size is the usual size of the result.
	hint := 0
	if len(a) > 0 && !a[0].constant && a[0].offs != nil {
		hint = int(a[0].offs[n] - a[0].offs[0])
	}
	var scratch []byte
	if r.k.size != nil {
		total, largest, err := r.presize(a, n, v, &budget)
		if err != nil {
			v.release()
			return nil, err
		}
		hint = int(min(total, math.MaxInt32))
		// Sized once for the largest value (its reservation is held:
		// presize), so that appends never regrow it and no row's size is
		// computed twice.
		scratch = make([]byte, 0, min(largest, maxValueBytes))
	} else if hint > 0 {
		// An unsized kernel's output is checked as it grows; its first
		// buffer too.
		if err := budget.output(int64(hint)); err != nil {
			v.release()
			return nil, err
		}
	}
	out := newStrOut(r.mem, n, hint)
	vb := valueBuf{budget: &budget}
	for i := 0; i < n; i++ {
		if v.valid(i) {
			res, ok, err := r.row(a, i, scratch[:0], &vb, &budget)
			if err == nil && ok && r.k.size == nil && len(out.data)+len(res) > cap(out.data) {
				// The result column of an unsized kernel grows only
				// after its growth is checked against the account.
				var c int
				if c, err = budget.outputRoom(len(out.data), cap(out.data), len(res)); err == nil {
					out.growTo(c)
				}
			}
			if err != nil {
				out.release()
				v.release()
				return nil, r.rowError(a, i, err)
			}
			if ok {
				out.appendBytes(res)
			} else {
				v.setNull(i)
			}
			if r.k.build == nil {
				scratch = res
			}
		}
		out.next()
	}
	return out.build(r.dt, v)
}

// row builds row i's value with the kernel: into vb, reserving as it
// grows (build), or into scratch (str), whose growth by a kernel of
// unknown size is reserved after the row.
func (r *rowEval) row(a []rowArg, i int, scratch []byte, vb *valueBuf, budget *valueBudget) ([]byte, bool, error) {
	if r.k.build != nil {
		vb.b = vb.b[:0]
		ok, err := r.k.build(a, i, vb)
		return vb.b, ok, err
	}
	res, ok, err := r.k.str(a, i, scratch)
	if err == nil && int64(cap(res)) > budget.acct.held {
		// A kernel of unknown size grew its scratch: reserve it now, so
		// that the next growth is refused over the limit.
		err = budget.scratch(int64(cap(res)))
	}
	return res, ok, err
}

// presize sums the size bounds of the valid rows and checks, before
// anything is built, that the output column and the largest value's
// scratch fit the query's account: the scratch stays reserved for the
// evaluation. A row over maxValueBytes gets the kernel's own error.
func (r *rowEval) presize(a []rowArg, n int, v *validityOut, budget *valueBudget) (total, largest int64, err error) {
	for i := 0; i < n; i++ {
		if !v.valid(i) {
			continue
		}
		b := r.k.size(a, i)
		if b > maxValueBytes {
			if _, _, err := r.k.str(a, i, nil); err != nil {
				return 0, 0, r.rowError(a, i, err)
			}
			b = maxValueBytes
		}
		total = satAdd(total, b)
		largest = max(largest, b)
	}
	if err := budget.scratch(largest); err != nil {
		return 0, 0, err
	}
	if err := budget.output(total); err != nil {
		return 0, 0, err
	}
	if total > math.MaxInt32 {
		return 0, 0, fmt.Errorf("%s: the result column of %d bytes exceeds the 2 GiB limit of a batch: %w", r.f.Name, total, ErrOverflow)
	}
	return total, largest, nil
}

// foldBytes implements foldSizer: the size of a call of constants whose
// kernel knows it.
func (r *rowEval) foldBytes() int64 {
	if r.k.size == nil {
		return 0
	}
	a := make([]rowArg, len(r.args))
	for i, ev := range r.args {
		c, ok := fnConstValue(ev)
		if !ok || c == nil {
			return 0
		}
		a[i] = constRowArg(c, r.kinds[min(i, len(r.kinds)-1)])
	}
	return r.k.size(a, 0)
}

func (r *rowEval) evalBool(a []rowArg, n int, v *validityOut) (arrow.Array, error) {
	buf := memory.NewResizableBuffer(r.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	for i := range bits {
		bits[i] = 0
	}
	for i := 0; i < n; i++ {
		if !v.valid(i) {
			continue
		}
		res, ok, err := r.k.bool(a, i)
		if err != nil {
			buf.Release()
			v.release()
			return nil, r.rowError(a, i, err)
		}
		if !ok {
			v.setNull(i)
		} else if res {
			bitutil.SetBit(bits, i)
		}
	}
	bm, nulls := v.finish()
	return fnNewArray(r.dt, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

func (r *rowEval) evalFloat(a []rowArg, n int, v *validityOut) (arrow.Array, error) {
	buf, dst := fnFixedBuf[float64](r.mem, n)
	for i := 0; i < n; i++ {
		if !v.valid(i) {
			dst[i] = 0
			continue
		}
		res, ok, err := r.k.flt(a, i)
		if err != nil {
			buf.Release()
			v.release()
			return nil, r.rowError(a, i, err)
		}
		if !ok {
			v.setNull(i)
		}
		dst[i] = res
	}
	bm, nulls := v.finish()
	return fnNewArray(r.dt, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

// evalNum writes an integral result: int32 (INT, DATE) or int64 (BIGINT,
// TIMESTAMP).
func (r *rowEval) evalNum(a []rowArg, n int, v *validityOut) (arrow.Array, error) {
	switch r.dt.ID() {
	case arrow.INT32, arrow.DATE32:
		return rowNumInto[int32](r, a, n, v)
	case arrow.INT8:
		return rowNumInto[int8](r, a, n, v)
	case arrow.INT16:
		return rowNumInto[int16](r, a, n, v)
	}
	return rowNumInto[int64](r, a, n, v)
}

func rowNumInto[T int8 | int16 | int32 | int64](r *rowEval, a []rowArg, n int, v *validityOut) (arrow.Array, error) {
	buf, dst := fnFixedBuf[T](r.mem, n)
	for i := 0; i < n; i++ {
		if !v.valid(i) {
			dst[i] = 0
			continue
		}
		res, ok, err := r.k.num(a, i)
		if err != nil {
			buf.Release()
			v.release()
			return nil, r.rowError(a, i, err)
		}
		if !ok {
			v.setNull(i)
		}
		dst[i] = T(res)
	}
	bm, nulls := v.finish()
	return fnNewArray(r.dt, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

// rowFunc registers the binding of a row-kernel function whose kernels do
// not depend on its arguments' types.
func rowsFunc(name string, kinds []rowKind, dt arrow.DataType, k rowKernels) func(args []Expr) Expr {
	return func(args []Expr) Expr {
		return &FuncExpr{Name: name, Args: args, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, ev []Evaluator) (Evaluator, error) {
			return bindRows(f, in, mem, ev, kinds, dt, k)
		}}
	}
}

// rowBinder registers a function whose binding looks at its arguments
// (constant formats, result types that follow the input).
func rowBinder(name string, bind func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error)) func(args []Expr) Expr {
	return func(args []Expr) Expr { return &FuncExpr{Name: name, Args: args, bind: bind} }
}
