package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ArithOp is a binary arithmetic operator.
type ArithOp uint8

// The arithmetic operators.
const (
	ArithAdd ArithOp = iota // +
	ArithSub                // -
	ArithMul                // *
	ArithDiv                // / (always fractional, as Spark's /)
	ArithMod                // % (remainder, sign of the dividend)
)

// String is the operator's SQL symbol.
func (op ArithOp) String() string {
	switch op {
	case ArithAdd:
		return "+"
	case ArithSub:
		return "-"
	case ArithMul:
		return "*"
	case ArithDiv:
		return "/"
	case ArithMod:
		return "%"
	}
	return fmt.Sprintf("ArithOp(%d)", uint8(op))
}

// Arithmetic is a binary arithmetic expression with Spark 4 ANSI semantics:
//
//   - Operands widen to their common type (int < bigint < decimal < double).
//     int and bigint operands keep their type for + - * %, and overflow is an
//     error (ErrOverflow) naming the row's operand values.
//   - / is always fractional: integer and double operands divide as double;
//     decimal operands divide as decimal.
//   - Decimal results follow Spark's precision and scale rules with
//     spark.sql.decimalOperations.allowPrecisionLoss=true (the default): + -
//     get max(s1,s2) fractional digits, * gets s1+s2, / gets max(6, s1+p2+1),
//     each reduced (down to at least 6) when the precision would exceed 38;
//     rounding is HALF_UP, and a result that does not fit is ErrOverflow.
//     An integral operand takes the precision of its type (10 for int, 20
//     for bigint), or only the digits of its value when it is a literal.
//   - A zero divisor of / or % is ErrDivideByZero, for doubles too (Spark 4
//     ANSI raises DIVIDE_BY_ZERO for 1.0/0); a null operand gives null first.
//
// Kernels work on whole columns; a constant operand binds to a
// column-with-constant kernel and is never expanded. Build one with Add,
// Sub, Mul, Div or Mod.
//
// Mode selects what happens where ANSI raises: ModeANSI (the zero value)
// raises ARITHMETIC_OVERFLOW or DIVIDE_BY_ZERO; ModeLegacy (Spark 3, ANSI
// off) wraps integer results and gives NULL for a zero divisor and for a
// decimal result that does not fit; ModeTry (try_add, try_subtract,
// try_multiply, try_divide) gives NULL for all of them. Overflow is
// detected per batch by the kernels; only a batch that has an offender
// takes the row-by-row path.
type Arithmetic struct {
	Op          ArithOp
	Left, Right Expr
	Mode        EvalMode
}

// Add returns (l + r).
func Add(l, r Expr) Expr { return &Arithmetic{Op: ArithAdd, Left: l, Right: r} }

// Sub returns (l - r).
func Sub(l, r Expr) Expr { return &Arithmetic{Op: ArithSub, Left: l, Right: r} }

// Mul returns (l * r).
func Mul(l, r Expr) Expr { return &Arithmetic{Op: ArithMul, Left: l, Right: r} }

// Div returns (l / r), always fractional (double or decimal).
func Div(l, r Expr) Expr { return &Arithmetic{Op: ArithDiv, Left: l, Right: r} }

// Mod returns (l % r), the remainder with the sign of l.
func Mod(l, r Expr) Expr { return &Arithmetic{Op: ArithMod, Left: l, Right: r} }

// String renders (l op r).
func (a *Arithmetic) String() string {
	if a.Mode == ModeTry {
		return tryName(a.Op) + "(" + a.Left.String() + ", " + a.Right.String() + ")"
	}
	return "(" + a.Left.String() + " " + a.Op.String() + " " + a.Right.String() + ")"
}

// Bind implements Expr.
func (a *Arithmetic) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	l, err := a.Left.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	r, err := a.Right.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	lt, rt := Unwrap(l.DataType()), Unwrap(r.DataType())
	if !isArithType(lt) || !isArithType(rt) {
		return nil, newBindError(a, in, fmt.Errorf("cannot apply %s to %s and %s: %w", a.Op, TypeName(lt), TypeName(rt), ErrType))
	}
	ev, err := bindArith(a, l, r, mem)
	if err != nil {
		return nil, newBindError(a, in, err)
	}
	return ev, nil
}

func isArithType(dt arrow.DataType) bool { return IsNumeric(dt) || dt.ID() == arrow.NULL }

func isFloating(dt arrow.DataType) bool {
	return dt.ID() == arrow.FLOAT64 || dt.ID() == arrow.FLOAT32
}

// bindArith picks the result type and the typed kernel.
func bindArith(a *Arithmetic, l, r Evaluator, mem memory.Allocator) (Evaluator, error) {
	lt, rt := Unwrap(l.DataType()), Unwrap(r.DataType())
	if lt.ID() == arrow.NULL && rt.ID() == arrow.NULL {
		// Spark types NULL + NULL as double.
		return newConst(Float64, nil, mem), nil
	}
	// A NULL operand (a NULL literal or a column of the Null type) makes
	// every row null; type the result as if it had the other operand's type.
	allNull := isNullConst(l) || isNullConst(r) || lt.ID() == arrow.NULL || rt.ID() == arrow.NULL
	if lt.ID() == arrow.NULL {
		lt = rt
	}
	if rt.ID() == arrow.NULL {
		rt = lt
	}
	expr := textOf(a)
	lName, rName := operandName(a.Left, l), operandName(a.Right, r)
	if (lt.ID() == arrow.DECIMAL128 || rt.ID() == arrow.DECIMAL128) && !isFloating(lt) && !isFloating(rt) {
		ld, rd := decimalOperandType(l, lt), decimalOperandType(r, rt)
		p, s := decimalArithType(a.Op, ld.Precision, ld.Scale, rd.Precision, rd.Scale)
		dt := Decimal(p, s)
		if allNull {
			return newConst(dt, nil, mem), nil
		}
		lw, err := numericWiden(l, ld, mem, expr, lName)
		if err != nil {
			return nil, err
		}
		rw, err := numericWiden(r, rd, mem, expr, rName)
		if err != nil {
			return nil, err
		}
		ev := newDecimalArith(a.Op, a.Mode, newBinaryBase(expr, lw, rw, lName, rName, mem), ld, rd, dt.(*arrow.Decimal128Type))
		return foldIfConstant(ev, mem, lw, rw), nil
	}
	common, _ := CommonType(lt, rt)
	var narrow arrow.DataType // tinyint, smallint or float: computed wider, then narrowed
	switch {
	case common.ID() == arrow.FLOAT32 && a.Op != ArithDiv:
		narrow, common = common, Float64
	case a.Op == ArithDiv || isFloating(common):
		common = Float64
	case common.ID() == arrow.INT8 || common.ID() == arrow.INT16:
		narrow, common = common, Int32
	}
	if allNull {
		if narrow != nil {
			return newConst(narrow, nil, mem), nil
		}
		return newConst(common, nil, mem), nil
	}
	if narrow != nil && narrow.ID() == arrow.FLOAT32 {
		// An integer operand of a float operation is rounded to float
		// first, as Spark casts it; float → double is then exact.
		var err error
		if l, err = numericWiden(l, Float32, mem, expr, lName); err != nil {
			return nil, err
		}
		if r, err = numericWiden(r, Float32, mem, expr, rName); err != nil {
			return nil, err
		}
	}
	lw, err := numericWiden(l, common, mem, expr, lName)
	if err != nil {
		return nil, err
	}
	rw, err := numericWiden(r, common, mem, expr, rName)
	if err != nil {
		return nil, err
	}
	base := newBinaryBase(expr, lw, rw, lName, rName, mem)
	var ev Evaluator
	switch common.ID() {
	case arrow.INT32:
		ev = &intArithEval[int32]{binaryBase: base, op: a.Op, dt: common, mode: a.Mode}
	case arrow.INT64:
		ev = &intArithEval[int64]{binaryBase: base, op: a.Op, dt: common, mode: a.Mode}
	default:
		ev = &floatArithEval{binaryBase: base, op: a.Op, mode: a.Mode}
	}
	switch {
	case narrow != nil && narrow.ID() == arrow.FLOAT32:
		// + - * % of two floats computed in double and rounded once to
		// float is the float operation's correctly rounded result (a
		// double holds more than twice float's precision).
		ev = &float32Eval{in: ev, mem: mem}
	case narrow != nil:
		// Spark keeps tinyint and smallint: the int result of two such
		// operands cannot overflow int, only the narrow type.
		ev = &narrowArithEval{in: ev, dt: narrow, mode: a.Mode, base: base, op: a.Op}
	}
	return foldIfConstant(ev, mem, lw, rw), nil
}

// operandName is how runtime errors name an operand: its SQL text, or ""
// for a constant (its value is already in the expression's text).
func operandName(e Expr, ev Evaluator) sqlText {
	if _, ok := constValue(ev); ok {
		return sqlText{}
	}
	return textOf(e)
}

// foldIfConstant folds ev when every operand is constant.
func foldIfConstant(ev Evaluator, mem memory.Allocator, operands ...Evaluator) Evaluator {
	for _, o := range operands {
		if _, ok := constValue(o); !ok {
			return ev
		}
	}
	return foldConstant(ev, mem)
}

// binaryBase holds what every binary kernel evaluator shares: its
// operands, which of them are constants, and how errors name them.
type binaryBase struct {
	expr           sqlText // the expression, for errors
	l, r           Evaluator
	lConst, rConst bool // bound to constant-operand kernels
	lv, rv         any  // the constants' values
	lName, rName   sqlText
	mem            memory.Allocator
	// allRight evaluates the right operand for every row, also where the
	// left one is null (<=>, whose result depends on it there).
	allRight bool
}

func newBinaryBase(expr sqlText, l, r Evaluator, lName, rName sqlText, mem memory.Allocator) binaryBase {
	b := binaryBase{expr: expr, l: l, r: r, lName: lName, rName: rName, mem: mem}
	b.lv, b.lConst = constValue(l)
	b.rv, b.rConst = constValue(r)
	if b.lConst && b.rConst {
		// Both constant and not folded (the fold failed): the constant is
		// then the whole result, so expanding the left one is fine.
		b.lConst = false
	}
	return b
}

// operands evaluates the non-constant operands; a constant operand yields
// a nil array. The caller releases what it gets.
func (b *binaryBase) operands(ctx context.Context, rec arrow.Record) (la, ra arrow.Array, err error) {
	if !b.lConst {
		if la, err = b.l.Eval(ctx, rec); err != nil {
			return nil, nil, err
		}
	}
	if !b.rConst {
		if la == nil || b.allRight {
			ra, err = b.r.Eval(ctx, rec)
		} else {
			ra, err = evalWhereValid(ctx, b.r, rec, la, b.mem)
		}
		if err != nil {
			releaseAll(la)
			return nil, nil, err
		}
	}
	return la, ra, nil
}

// evalWhereValid evaluates ev for the rows where arr is not null (see
// evalWhere): Spark evaluates a binary operator row by row, left operand
// first, and skips the right one where the left is null, so the right
// operand's errors on those rows (an overflowing conversion, say) do not
// count. The mask is only built when ev fails.
func evalWhereValid(ctx context.Context, ev Evaluator, rec arrow.Record, arr arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	out, err := ev.Eval(ctx, rec)
	var ee *EvalError
	if err == nil || arr.NullN() == 0 || !errors.As(err, &ee) {
		return out, err
	}
	n := int(rec.NumRows())
	valid := validityWords(arr)
	need := make([]uint64, words64(n))
	for w := range need {
		need[w] = valid.word(w)
	}
	return evalNeeded(ctx, ev, rec, need, n, mem, err)
}

// evalError builds the runtime error of row, naming the operand values.
func (b *binaryBase) evalError(row int, err error, la, ra arrow.Array) *EvalError {
	var parts []string
	if la != nil && !b.lName.empty() {
		parts = append(parts, b.lName.String()+"="+FormatValue(ValueAt(la, row), la.DataType()))
	}
	if ra != nil && !b.rName.empty() {
		parts = append(parts, b.rName.String()+"="+FormatValue(ValueAt(ra, row), ra.DataType()))
	}
	return &EvalError{Expr: b.expr.String(), Row: row, Values: strings.Join(parts, ", "), Err: err}
}

// releaseAll releases the non-nil arrays.
func releaseAll(arrs ...arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// intArithEval runs + - * % over int or bigint operands of the same type.
type intArithEval[T int32 | int64] struct {
	binaryBase
	op   ArithOp
	dt   arrow.DataType
	mode EvalMode
}

func (e *intArithEval[T]) DataType() arrow.DataType { return e.dt }

func (e *intArithEval[T]) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	la, ra, err := e.operands(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer releaseAll(la, ra)
	n := int(rec.NumRows())
	x, y := operandOf[T](la, e.lv), operandOf[T](ra, e.rv)
	if e.op == ArithMod {
		if row := firstZeroDivisor(y, la, ra, n); row >= 0 {
			if e.mode == ModeANSI {
				return nil, e.evalError(row, errDivideByZero, la, ra)
			}
			return e.rowByRow(x, y, la, ra, n), nil
		}
	}
	buf, out := newValues[T](e.mem, n)
	if !intArith(e.op, x, y, out) {
		if row := firstIntOverflow(e.op, x, y, la, ra, n); row >= 0 {
			switch e.mode {
			case ModeANSI:
				buf.Release()
				return nil, e.evalError(row, errArithOverflow(tryName(e.op)), la, ra)
			case ModeTry:
				buf.Release()
				return e.rowByRow(x, y, la, ra, n), nil
			}
			// Without ANSI the kernels' wrapped results are Spark 3's.
		}
	}
	validity, nulls := andValidity(e.mem, n, la, ra)
	return newArrayOwning(e.dt, n, buf, validity, nulls), nil
}

// rowByRow is the slow path of a batch with a zero divisor or (try_) an
// overflow outside ANSI: such rows are NULL, the others computed (wrapping).
func (e *intArithEval[T]) rowByRow(x, y operand[T], la, ra arrow.Array, n int) arrow.Array {
	buf, out := newValues[T](e.mem, n)
	v := newValidityOut(e.mem, n, la, ra)
	for i := 0; i < n; i++ {
		a, b := x.at(i), y.at(i)
		out[i] = 0
		switch {
		case !v.valid(i):
		case e.op == ArithMod && b == 0:
			v.setNull(i)
		case e.mode == ModeTry && intOverflows(e.op, a, b):
			v.setNull(i)
		default:
			out[i] = intOp(e.op, a, b)
		}
	}
	bm, nulls := v.finish()
	return newArrayOwning(e.dt, n, buf, bm, nulls)
}

// intOp is one wrapping integer operation (+ - * %; b is not 0 for %).
func intOp[T int32 | int64](op ArithOp, a, b T) T {
	switch op {
	case ArithAdd:
		return a + b
	case ArithSub:
		return a - b
	case ArithMul:
		return a * b
	}
	return a % b
}

// floatArithEval runs + - * / % over doubles.
type floatArithEval struct {
	binaryBase
	op   ArithOp
	mode EvalMode
}

func (e *floatArithEval) DataType() arrow.DataType { return Float64 }

func (e *floatArithEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	la, ra, err := e.operands(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer releaseAll(la, ra)
	n := int(rec.NumRows())
	x, y := operandOf[float64](la, e.lv), operandOf[float64](ra, e.rv)
	if e.op == ArithDiv || e.op == ArithMod {
		if row := firstZeroDivisor(y, la, ra, n); row >= 0 {
			if e.mode == ModeANSI {
				return nil, e.evalError(row, errDivideByZero, la, ra)
			}
			return e.rowByRow(x, y, la, ra, n), nil
		}
	}
	buf, out := newValues[float64](e.mem, n)
	floatArith(e.op, x, y, out)
	validity, nulls := andValidity(e.mem, n, la, ra)
	return newArrayOwning(Float64, n, buf, validity, nulls), nil
}

// narrowArithEval narrows the int result of + - * % over tinyint or
// smallint operands to their type: a value out of its range is
// ARITHMETIC_OVERFLOW (ANSI), wraps (legacy) or is NULL (try_).
type narrowArithEval struct {
	in   Evaluator
	dt   arrow.DataType
	mode EvalMode
	base binaryBase
	op   ArithOp
}

func (e *narrowArithEval) DataType() arrow.DataType { return e.dt }

func (e *narrowArithEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	wide, err := e.in.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer wide.Release()
	src := fnRawValues[int32](wide)
	lo, hi := int32(math.MinInt8), int32(math.MaxInt8)
	if e.dt.ID() == arrow.INT16 {
		lo, hi = math.MinInt16, math.MaxInt16
	}
	n := wide.Len()
	v := newValidityOut(e.base.mem, n, wide)
	var buf *memory.Buffer
	var row = -1
	if e.dt.ID() == arrow.INT8 {
		b, dst := fnFixedBuf[int8](e.base.mem, n)
		buf, row = b, narrowInts(src, dst, lo, hi, wide, v, e.mode)
	} else {
		b, dst := fnFixedBuf[int16](e.base.mem, n)
		buf, row = b, narrowInts(src, dst, lo, hi, wide, v, e.mode)
	}
	if row >= 0 {
		buf.Release()
		v.release()
		return nil, &EvalError{Expr: e.base.expr.String(), Row: row, Err: errArithOverflow(tryName(e.op))}
	}
	bm, nulls := v.finish()
	return fnNewArray(e.dt, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
}

// narrowInts narrows every value (wrapping); a valid value out of [lo, hi]
// is returned as the failing row under ANSI and made NULL under try_.
func narrowInts[D int8 | int16](src []int32, dst []D, lo, hi int32, wide arrow.Array, v *validityOut, mode EvalMode) int {
	ok := true
	for i, x := range src {
		dst[i] = D(x)
		ok = ok && x >= lo && x <= hi
	}
	if ok || mode == ModeLegacy {
		return -1
	}
	for i, x := range src {
		if (x < lo || x > hi) && wide.IsValid(i) {
			if mode == ModeANSI {
				return i
			}
			v.setNull(i)
		}
	}
	return -1
}

// rowByRow is the slow path of a batch with a zero divisor outside ANSI:
// those rows are NULL.
func (e *floatArithEval) rowByRow(x, y operand[float64], la, ra arrow.Array, n int) arrow.Array {
	buf, out := newValues[float64](e.mem, n)
	v := newValidityOut(e.mem, n, la, ra)
	for i := 0; i < n; i++ {
		a, b := x.at(i), y.at(i)
		out[i] = 0
		switch {
		case !v.valid(i):
		case b == 0:
			v.setNull(i)
		case e.op == ArithDiv:
			out[i] = a / b
		default:
			out[i] = math.Mod(a, b)
		}
	}
	bm, nulls := v.finish()
	return newArrayOwning(Float64, n, buf, bm, nulls)
}

// Negation is unary minus, (- x). Negating the smallest int or bigint is
// ErrOverflow (ANSI).
type Negation struct {
	Child Expr
	Mode  EvalMode // ModeLegacy wraps (Spark 3); otherwise overflow raises
}

// Negate returns (- e).
func Negate(e Expr) Expr { return &Negation{Child: e} }

// String renders (- x).
func (n *Negation) String() string { return "(- " + n.Child.String() + ")" }

// Bind implements Expr.
func (n *Negation) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	c, err := n.Child.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	dt := Unwrap(c.DataType())
	switch dt.ID() {
	case arrow.NULL:
		return newConst(Float64, nil, mem), nil
	case arrow.INT8, arrow.INT16:
		dt = Int32
	case arrow.FLOAT32:
		// Negated in double and narrowed back: exact.
		n := *n
		n.Child = Cast(n.Child, Float64)
		ev, err := n.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		return foldIfConstant(&float32Eval{in: ev, mem: mem}, mem, c), nil
	}
	if !IsNumeric(dt) {
		return nil, newBindError(n, in, fmt.Errorf("cannot apply - to %s: %w", TypeName(dt), ErrType))
	}
	name := operandName(n.Child, c)
	c, err = numericWiden(c, dt, mem, textOf(n), name)
	if err != nil {
		return nil, newBindError(n, in, err)
	}
	if isNullConst(c) {
		return newConst(dt, nil, mem), nil
	}
	ev := &negateEval{child: c, dt: dt, expr: textOf(n), name: name, mem: mem, wrap: n.Mode == ModeLegacy}
	return foldIfConstant(ev, mem, c), nil
}

type negateEval struct {
	child      Evaluator
	dt         arrow.DataType
	expr, name sqlText
	mem        memory.Allocator
	wrap       bool // without ANSI -MIN is MIN, as Java's negation
}

func (e *negateEval) DataType() arrow.DataType { return e.dt }

func (e *negateEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := e.child.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	n := arr.Len()
	var buf *memory.Buffer
	row := -1
	switch e.dt.ID() {
	case arrow.INT32:
		buf, row = negateInts[int32](e.mem, arr)
	case arrow.INT64:
		buf, row = negateInts[int64](e.mem, arr)
	case arrow.FLOAT64:
		buf = negateFloats(e.mem, arr)
	case arrow.DECIMAL128:
		buf = negateDecimals(e.mem, arr)
	}
	if row >= 0 && !e.wrap {
		buf.Release()
		values := ""
		if !e.name.empty() {
			values = e.name.String() + "=" + FormatValue(ValueAt(arr, row), e.dt)
		}
		return nil, &EvalError{Expr: e.expr.String(), Row: row, Values: values, Err: errArithOverflow("try_subtract")}
	}
	validity, nulls := copyValidity(e.mem, arr)
	return newArrayOwning(e.dt, n, buf, validity, nulls), nil
}
