package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CompareOp is a comparison operator.
type CompareOp uint8

// The comparison operators.
const (
	CompareEq         CompareOp = iota // =
	CompareNotEq                       // <>
	CompareLt                          // <
	CompareLe                          // <=
	CompareGt                          // >
	CompareGe                          // >=
	CompareEqNullSafe                  // <=>, never null
)

// String is the operator's SQL symbol.
func (op CompareOp) String() string {
	switch op {
	case CompareEq:
		return "="
	case CompareNotEq:
		return "<>"
	case CompareLt:
		return "<"
	case CompareLe:
		return "<="
	case CompareGt:
		return ">"
	case CompareGe:
		return ">="
	case CompareEqNullSafe:
		return "<=>"
	}
	return fmt.Sprintf("CompareOp(%d)", uint8(op))
}

// flip is the operator with its operands swapped (a < b ⇔ b > a).
func (op CompareOp) flip() CompareOp {
	switch op {
	case CompareLt:
		return CompareGt
	case CompareLe:
		return CompareGe
	case CompareGt:
		return CompareLt
	case CompareGe:
		return CompareLe
	}
	return op
}

// Comparison compares two values and yields a boolean: null when either
// side is null, except for <=> (EqualNullSafe), which treats two nulls as
// equal and is never null.
//
// Numbers compare after widening to their common type; strings (plain or
// dictionary-encoded) and binaries compare byte-wise; booleans order false
// before true; dates compare with timestamps as timestamps; doubles order
// NaN above every number and equal to itself (Spark's order); structs of
// the same type compare field by field, in order, with null fields first
// and equal to each other. Other mixes (a string with a number, say) are
// bind errors: Spark would insert an implicit cast, which here is an
// explicit CAST.
//
// A dictionary-encoded string compared with a constant compares each
// dictionary entry once and then maps the indices.
type Comparison struct {
	Op          CompareOp
	Left, Right Expr
}

// Eq returns (l = r).
func Eq(l, r Expr) Expr { return &Comparison{Op: CompareEq, Left: l, Right: r} }

// NotEq returns (l <> r).
func NotEq(l, r Expr) Expr { return &Comparison{Op: CompareNotEq, Left: l, Right: r} }

// Lt returns (l < r).
func Lt(l, r Expr) Expr { return &Comparison{Op: CompareLt, Left: l, Right: r} }

// Le returns (l <= r).
func Le(l, r Expr) Expr { return &Comparison{Op: CompareLe, Left: l, Right: r} }

// Gt returns (l > r).
func Gt(l, r Expr) Expr { return &Comparison{Op: CompareGt, Left: l, Right: r} }

// Ge returns (l >= r).
func Ge(l, r Expr) Expr { return &Comparison{Op: CompareGe, Left: l, Right: r} }

// EqualNullSafe returns (l <=> r): true when both are null, false when one
// is, else l = r.
func EqualNullSafe(l, r Expr) Expr { return &Comparison{Op: CompareEqNullSafe, Left: l, Right: r} }

// String renders (l op r).
func (c *Comparison) String() string {
	return "(" + c.Left.String() + " " + c.Op.String() + " " + c.Right.String() + ")"
}

// Bind implements Expr.
func (c *Comparison) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	l, err := c.Left.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	r, err := c.Right.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	ev, err := bindCompare(c.Op, l, r, mem, textOf(c), operandName(c.Left, l), operandName(c.Right, r))
	if err != nil {
		return nil, newBindError(c, in, err)
	}
	return ev, nil
}

// compareType is the type both sides of a comparison convert to.
func compareType(op CompareOp, lt, rt arrow.DataType) (arrow.DataType, error) {
	lt, rt = Unwrap(lt), Unwrap(rt)
	if common, ok := CommonType(lt, rt); ok {
		switch common.ID() {
		case arrow.INT8, arrow.INT16:
			return Int32, nil
		case arrow.FLOAT32:
			return Float64, nil
		case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.DECIMAL128, arrow.STRING, arrow.BINARY,
			arrow.BOOL, arrow.DATE32, arrow.TIMESTAMP, arrow.DURATION:
			// DURATION: day-time intervals, whatever their fields, compare
			// as their microseconds, as Spark compares them.
			return common, nil
		case arrow.STRUCT, arrow.LIST:
			if err := checkOrderable(common); err == nil {
				return common, nil
			}
		}
	}
	return nil, fmt.Errorf("cannot apply %s to %s and %s: %w", op, TypeName(lt), TypeName(rt), ErrType)
}

// isNullType reports whether ev is the NULL literal or of the Null type.
func isNullType(ev Evaluator) bool {
	return ev.DataType().ID() == arrow.NULL || isNullConst(ev)
}

// bindCompare binds l op r; expr and the operand names are for errors.
func bindCompare(op CompareOp, l, r Evaluator, mem memory.Allocator, expr, lName, rName sqlText) (Evaluator, error) {
	lNull, rNull := isNullType(l), isNullType(r)
	if l.DataType().ID() != arrow.NULL && r.DataType().ID() != arrow.NULL {
		if _, err := compareType(op, l.DataType(), r.DataType()); err != nil {
			return nil, err
		}
	}
	if op == CompareEqNullSafe && (lNull || rNull) {
		if lNull && rNull {
			return newConst(Boolean, true, mem), nil
		}
		x, xName := r, rName
		if rNull {
			x, xName = l, lName
		}
		// A typed NULL still converts the other side to the common type, as
		// a NULL column would, so that its conversion errors (a date past
		// the timestamp range) do not depend on whether the NULL is a
		// literal.
		if common, err := compareType(op, l.DataType(), r.DataType()); err == nil && l.DataType().ID() != arrow.NULL && r.DataType().ID() != arrow.NULL {
			var err error
			if x, err = numericWiden(x, common, mem, expr, xName); err != nil {
				return nil, err
			}
		}
		return foldIfConstant(&isNullEval{child: x, mem: mem}, mem, x), nil
	}
	if lNull || rNull {
		return newConst(Boolean, nil, mem), nil
	}
	common, _ := compareType(op, l.DataType(), r.DataType())
	// Constants go to the right, so kernels need no constant-on-the-left
	// variants.
	_, lc := constValue(l)
	_, rc := constValue(r)
	if lc && !rc {
		l, r, lName, rName, op = r, l, rName, lName, op.flip()
	}
	kop := op
	if op == CompareNotEq || op == CompareEqNullSafe {
		kop = CompareEq
	}
	var kernel cmpKernel
	if cv, ok := constValue(r); ok && isDictString(l.DataType()) && common.ID() == arrow.STRING {
		kernel = &cmpDict{op: kop, c: []byte(cv.(string))}
	} else {
		var err error
		if c, _ := CommonType(l.DataType(), r.DataType()); c != nil && c.ID() == arrow.FLOAT32 {
			// Spark compares an integer with a float as floats: the
			// integer is rounded to float first.
			if l, err = numericWiden(l, Float32, mem, expr, lName); err != nil {
				return nil, err
			}
			if r, err = numericWiden(r, Float32, mem, expr, rName); err != nil {
				return nil, err
			}
		}
		if l, err = numericWiden(l, common, mem, expr, lName); err != nil {
			return nil, err
		}
		if r, err = numericWiden(r, common, mem, expr, rName); err != nil {
			return nil, err
		}
		cv, _ := constValue(r)
		kernel = newCmpKernel(kop, common, cv, mem)
	}
	ev := &compareEval{
		binaryBase: newBinaryBase(expr, l, r, lName, rName, mem),
		kernel:     kernel,
		invert:     op == CompareNotEq,
		nullSafe:   op == CompareEqNullSafe,
	}
	ev.allRight = ev.nullSafe
	if common.ID() == arrow.STRUCT || common.ID() == arrow.LIST {
		// The struct kernel has no constant variant; a struct constant is
		// expanded (rare: window = struct(...)).
		ev.lConst, ev.rConst = false, false
	}
	return foldIfConstant(ev, mem, l, r), nil
}

func isDictString(dt arrow.DataType) bool {
	d, ok := dt.(*arrow.DictionaryType)
	return ok && d.ValueType.ID() == arrow.STRING
}

// newCmpKernel picks the kernel for operands of type dt; c is the right
// operand's constant value, if any.
func newCmpKernel(op CompareOp, dt arrow.DataType, c any, mem memory.Allocator) cmpKernel {
	switch dt.ID() {
	case arrow.INT32, arrow.DATE32:
		i, _ := toInt64(c)
		return &cmpFixed[int32]{op: op, c: int32(i)}
	case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION:
		i, _ := toInt64(c)
		return &cmpFixed[int64]{op: op, c: i}
	case arrow.FLOAT64:
		f, _ := c.(float64)
		return &cmpFloat{op: op, c: f}
	case arrow.DECIMAL128:
		d, _ := decimalValue(c)
		return &cmpDecimal{op: op, c: d}
	case arrow.STRING, arrow.BINARY:
		switch x := c.(type) {
		case string:
			return &cmpBytes{op: op, c: []byte(x)}
		case []byte:
			return &cmpBytes{op: op, c: x}
		}
		return &cmpBytes{op: op}
	case arrow.BOOL:
		b, _ := c.(bool)
		return &cmpBool{op: op, c: b}
	case arrow.STRUCT, arrow.LIST:
		return &cmpStruct{op: op, mem: mem}
	}
	return nil
}

// compareEval runs a comparison kernel and derives <> and <=> from =.
type compareEval struct {
	binaryBase
	kernel   cmpKernel
	invert   bool // <>: NOT of =
	nullSafe bool // <=>
}

func (e *compareEval) DataType() arrow.DataType { return Boolean }

func (e *compareEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	la, ra, err := e.operands(ctx, rec)
	if err != nil {
		return nil, err
	}
	kernel := e.kernel
	if p, ok := kernel.(cmpPreparer); ok {
		var decoded arrow.Array
		if decoded, kernel, err = p.prepare(e.mem, la); err != nil {
			releaseAll(la, ra)
			return nil, err
		}
		la.Release()
		la = decoded
	}
	defer releaseAll(la, ra)
	n := int(rec.NumRows())
	return compareArrays(e.mem, kernel, la, ra, n, e.invert, e.nullSafe), nil
}

// compareArrays runs kernel over la and ra (nil: constant) and builds the
// boolean result with SQL null semantics.
func compareArrays(mem memory.Allocator, kernel cmpKernel, la, ra arrow.Array, n int, invert, nullSafe bool) arrow.Array {
	vbuf, words := newBitmap(mem, n)
	kernel.compare(la, ra, n, words)
	if invert {
		for w := range words {
			words[w] = ^words[w]
		}
	}
	if nullSafe {
		if mayHaveNulls(la) || mayHaveNulls(ra) {
			lv, rv := constWords(true), constWords(true)
			if la != nil {
				lv = validityWords(la)
			}
			if ra != nil {
				rv = validityWords(ra)
			}
			for w := range words {
				x, y := lv.word(w), rv.word(w)
				words[w] = x&y&words[w] | ^x&^y
			}
		}
		return boolArrayOwning(n, vbuf, nil, 0)
	}
	validity, nulls := andValidity(mem, n, la, ra)
	return boolArrayOwning(n, vbuf, validity, nulls)
}

// cmpPreparer is a kernel that may need its left operand in another form
// for a given batch (a dictionary whose values have nulls is decoded).
type cmpPreparer interface {
	prepare(mem memory.Allocator, la arrow.Array) (arrow.Array, cmpKernel, error)
}
