package plan

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// maxRangeRows bounds range() at what a row count holds (Spark's counts
// in a BigInt). Its rows are made as they are read (see Range), so a
// long range costs time, which the query's timeout and cancel bound, not
// memory.
const maxRangeRows = math.MaxInt64

// rangeTable analyzes range(end), range(start, end), range(start, end,
// step) and range(start, end, step, numPartitions): a column id (bigint)
// from start (default 0) up to end, exclusive, by step (default 1;
// negative counts down), as Spark's range table-valued function.
// numPartitions changes nothing here: the rows come in order.
func (a *analyzer) rangeTable(x *sql.TableFunc) (*scope, error) {
	if len(x.Args) < 1 || len(x.Args) > 4 {
		return nil, errorAt(x.Pos, ErrType, "range needs 1 to 4 arguments (end | start, end[, step[, numPartitions]]), got %d.", len(x.Args))
	}
	r := &resolver{sc: oneRow(), clause: "range"}
	vals := make([]int64, len(x.Args))
	for i, arg := range x.Args {
		e, err := r.expr(arg)
		if err != nil {
			return nil, err
		}
		// Spark casts each argument to a bigint as an implicit cast
		// would: a number of any type (truncated: range(6 + cos(3)) is
		// range(5)), or a string.
		if dt := e.DataType(); !vector.IsNumeric(dt) && !vector.IsStringLike(dt) && dt.ID() != arrow.NULL {
			return nil, errorAt(arg.Position(), ErrType, "The arguments of range must be numbers, not %s (%s).", sql.Format(arg), vector.TypeName(e.DataType()))
		}
		if !isConstant(e) {
			return nil, errorAt(arg.Position(), ErrType, "The arguments of range must be constant: %s.", sql.Format(arg))
		}
		l, err := foldConstant(castTo(e, vector.Int64))
		if err != nil {
			return nil, errorAt(arg.Position(), ErrType, "range argument %s: %v", sql.Format(arg), err)
		}
		v, ok := l.Value.(int64)
		if !ok {
			return nil, errorAt(arg.Position(), ErrType, "The arguments of range must not be NULL: %s.", sql.Format(arg))
		}
		vals[i] = v
	}
	start, end, step := int64(0), vals[0], int64(1)
	if len(vals) >= 2 {
		start, end = vals[0], vals[1]
	}
	if len(vals) >= 3 {
		step = vals[2]
	}
	if step == 0 {
		return nil, errorAt(x.Pos, ErrType, "The step of range must not be 0.")
	}
	n, ok := rangeCount(start, end, step)
	if !ok {
		return nil, errorAt(x.Pos, ErrUnsupported, "range of more than %d rows (2^63 - 1) is not supported.", int64(maxRangeRows))
	}
	vn := newRange(start, step, n)
	qual := "range"
	if x.Alias != nil {
		qual = x.Alias.Name
	}
	if x.Watermark != nil {
		return nil, errorAt(x.Watermark.Pos, ErrUnsupported, "A watermark on range() is not supported (it is not a stream).")
	}
	return withQualifier(&SubqueryAlias{Input: vn, Alias: qual}, qual), nil
}

// rangeCount is the number of values of range(start, end, step) (step
// not 0), computed without building them; false when it is more than
// maxRangeRows. The span is taken in unsigned arithmetic so that
// extreme bounds do not overflow.
func rangeCount(start, end, step int64) (int, bool) {
	var span, by uint64
	switch {
	case step > 0 && end > start:
		span, by = uint64(end)-uint64(start), uint64(step)
	case step < 0 && end < start:
		span, by = uint64(start)-uint64(end), uint64(-(step+1))+1
	default:
		return 0, true
	}
	n := span / by
	if span%by != 0 {
		n++
	}
	if n > maxRangeRows {
		return 0, false
	}
	return int(n), true
}
