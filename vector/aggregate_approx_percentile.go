package vector

import (
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// percentile_approx(x, p [, accuracy]) (approx_percentile), as Spark's
// ApproximatePercentile: each group's values, as doubles, go into a
// Greenwald-Khanna summary of relative error 1/accuracy (gkSummary); the
// answer is converted back to the input's type. The partial state is the
// serialized summary.

// DefaultPercentileAccuracy is percentile_approx's accuracy when none is
// given.
const DefaultPercentileAccuracy = 10000

type approxPctAcc struct {
	elem   arrow.DataType // the input (and result element) type
	relErr float64
	pcts   []float64
	array  bool
	merge  bool
	sums   []*gkSummary
	vals   []float64 // scratch
	rows   []int32   // scratch
}

// approxPctType reports whether percentile_approx takes values of type t.
func approxPctType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128,
		arrow.DATE32, arrow.TIMESTAMP, arrow.INTERVAL_MONTHS, arrow.DURATION:
		return true
	}
	return false
}

// approxPctParams reads percentile_approx's constant percentage(s) and
// accuracy.
func approxPctParams(call AggregateCall, pct, accuracy any) (percentileParams, float64, error) {
	p, err := percentileParamsOf(call, pct)
	if err != nil {
		return p, 0, err
	}
	acc := int64(DefaultPercentileAccuracy)
	switch v := accuracy.(type) {
	case nil:
	case int64:
		acc = v
	case int32:
		acc = int64(v)
	case int16:
		acc = int64(v)
	case int8:
		acc = int64(v)
	default:
		return p, 0, fmt.Errorf("the accuracy of percentile_approx must be an integral constant, not %v: %w", accuracy, ErrType)
	}
	if acc <= 0 || acc > math.MaxInt32 {
		return p, 0, fmt.Errorf("the accuracy of percentile_approx must be between (0, %d], not %d: %w", math.MaxInt32, acc, ErrType)
	}
	return p, 1.0 / float64(acc), nil
}

// bindApproxPercentileRaw binds percentile_approx over input rows.
func bindApproxPercentileRaw(in *arrow.Schema, mem memory.Allocator, call AggregateCall, evs []Evaluator, types []arrow.DataType) (*boundAgg, error) {
	var consts [2]any
	for i := 1; i < len(evs); i++ {
		c, ok := evs[i].(ConstantEvaluator)
		if !ok {
			return nil, aggBindError(call, in, fmt.Errorf("the accuracy or percentage of percentile_approx must be a constant, not %s: %w", call.Args[i], ErrType))
		}
		consts[i-1] = c.Value()
	}
	p, relErr, err := approxPctParams(call, consts[0], consts[1])
	if err != nil {
		return nil, aggBindError(call, in, err)
	}
	t := types[0]
	if t.ID() == arrow.NULL {
		t = Float64
	}
	if !approxPctType(t) {
		return nil, aggBindError(call, in, fmt.Errorf("percentile_approx of %s is not supported (numbers, dates, timestamps and ANSI intervals are): %w", TypeName(t), ErrType))
	}
	acc := &approxPctAcc{elem: t, relErr: relErr, pcts: p.pcts, array: p.array}
	return &boundAgg{args: []Evaluator{Plain(evs[0], mem)}, acc: acc, result: arrow.Field{Type: acc.resultType(), Nullable: true}}, nil
}

// statePartDigest is percentile_approx's serialized summary.
const statePartDigest = "digest"

// bindApproxPercentileState binds percentile_approx over its partial
// state: the serialized summaries and a NULL column of the input type,
// which gives the result its type.
func bindApproxPercentileState(call AggregateCall, types []arrow.DataType) (accumulator, arrow.DataType, error) {
	if len(types) != 2 || types[0].ID() != arrow.BINARY || !approxPctType(types[1]) {
		return nil, nil, fmt.Errorf("partial state of percentile_approx must be (binary, input type), not %s: %w", typeList(types), ErrType)
	}
	elem := types[1]
	var consts [2]any
	for i := 1; i < len(call.Args); i++ {
		l, ok := call.Args[i].(*Literal)
		if !ok {
			return nil, nil, fmt.Errorf("the accuracy or percentage of percentile_approx must be a literal, not %s: %w", call.Args[i], ErrType)
		}
		consts[i-1] = l.Value
	}
	p, relErr, err := approxPctParams(call, consts[0], consts[1])
	if err != nil {
		return nil, nil, err
	}
	acc := &approxPctAcc{elem: elem, relErr: relErr, pcts: p.pcts, array: p.array, merge: true}
	return acc, acc.resultType(), nil
}

func (a *approxPctAcc) resultType() arrow.DataType {
	if a.array {
		return ListOf(a.elem)
	}
	return a.elem
}

func (a *approxPctAcc) stateTypes() []arrow.DataType { return []arrow.DataType{Binary, a.elem} }

func (a *approxPctAcc) resize(n int) {
	for len(a.sums) < n {
		a.sums = append(a.sums, nil)
	}
}

func (a *approxPctAcc) heapBytes() int64 {
	n := sliceBytes(a.sums) + sliceBytes(a.vals) + sliceBytes(a.rows)
	for _, s := range a.sums {
		if s != nil {
			n += int64(cap(s.sampled))*24 + int64(cap(s.head))*8 + 64
		}
	}
	return n
}

func (a *approxPctAcc) summary(g int32) *gkSummary {
	s := a.sums[g]
	if s == nil {
		s = newGKSummary(a.relErr)
		a.sums[g] = s
	}
	return s
}

// appendDoubles appends rows of v as doubles, as Spark's
// ApproximatePercentile.update converts them (dates as days, timestamps
// and day-time intervals as microseconds, year-month intervals as months).
func appendDoubles(dst []float64, v arrow.Array, rows []int32) []float64 {
	switch x := v.(type) {
	case *array.Float64:
		vals := x.Float64Values()
		for _, r := range rows {
			dst = append(dst, vals[r])
		}
	case *array.Float32:
		vals := x.Float32Values()
		for _, r := range rows {
			dst = append(dst, float64(vals[r]))
		}
	case *array.Decimal128:
		scale := x.DataType().(*arrow.Decimal128Type).Scale
		vals := x.Values()
		for _, r := range rows {
			dst = append(dst, decimalToFloat64(vals[r], scale))
		}
	case *array.Date32:
		vals := x.Date32Values()
		for _, r := range rows {
			dst = append(dst, float64(vals[r]))
		}
	case *array.Timestamp:
		vals := x.TimestampValues()
		for _, r := range rows {
			dst = append(dst, float64(vals[r]))
		}
	default:
		for _, n := range appendInts(nil, v, rows) {
			dst = append(dst, float64(n))
		}
	}
	return dst
}

func (a *approxPctAcc) update(gids []int32, args []arrow.Array) error {
	v := args[0]
	if a.merge {
		b, ok := v.(*array.Binary)
		if !ok {
			return fmt.Errorf("vector: percentile_approx state of %s: %w", TypeName(v.DataType()), ErrType)
		}
		for i, g := range gids {
			if b.IsNull(i) {
				continue
			}
			o, err := decodeGKSummary(b.Value(i))
			if err != nil {
				return err
			}
			a.summary(g).merge(o)
		}
		return nil
	}
	if v.DataType().ID() == arrow.NULL {
		return nil
	}
	bm, off := validity(v)
	rows := a.rows[:0]
	for i := range gids {
		if bm == nil || bitSet(bm, off+i) {
			rows = append(rows, int32(i))
		}
	}
	a.rows = rows
	a.vals = appendDoubles(a.vals[:0], v, rows)
	for j, r := range rows {
		a.summary(gids[r]).insert(a.vals[j])
	}
	return nil
}

// results converts each group's percentiles back to the input type.
func (a *approxPctAcc) results(mem memory.Allocator, gids []int32) (arrow.Array, error) {
	vb := array.NewBuilder(mem, a.elem)
	defer vb.Release()
	var lb *array.ListBuilder
	if a.array {
		lb = array.NewListBuilder(mem, a.elem)
		defer lb.Release()
		vb.Release()
		vb = lb.ValueBuilder()
		vb.Retain()
	}
	for _, g := range gids {
		var res []float64
		if int(g) < len(a.sums) && a.sums[g] != nil {
			res = a.sums[g].query(a.pcts)
		}
		if res == nil {
			if lb != nil {
				lb.AppendNull()
			} else {
				vb.AppendNull()
			}
			continue
		}
		if lb != nil {
			lb.Append(true)
		}
		for _, d := range res {
			appendFromDouble(vb, d)
		}
	}
	if lb != nil {
		return lb.NewArray(), nil
	}
	return vb.NewArray(), nil
}

// appendFromDouble appends d converted to the builder's type as Spark's
// ApproximatePercentile.eval does (toInt, toLong, ... truncate; decimals
// from the double's decimal digits, rounded HALF_UP to the type's scale,
// NULL when they do not fit).
func appendFromDouble(b array.Builder, d float64) {
	switch x := b.(type) {
	case *array.Float64Builder:
		x.Append(d)
	case *array.Float32Builder:
		x.Append(float32(d))
	case *array.Int8Builder:
		x.Append(int8(javaDoubleToInt(d)))
	case *array.Int16Builder:
		x.Append(int16(javaDoubleToInt(d)))
	case *array.Int32Builder:
		x.Append(javaDoubleToInt(d))
	case *array.Int64Builder:
		x.Append(javaDoubleToLong(d))
	case *array.Date32Builder:
		x.Append(arrow.Date32(javaDoubleToInt(d)))
	case *array.MonthIntervalBuilder:
		x.Append(arrow.MonthInterval(javaDoubleToInt(d)))
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(javaDoubleToLong(d)))
	case *array.DurationBuilder:
		x.Append(arrow.Duration(javaDoubleToLong(d)))
	case *array.Decimal128Builder:
		t := x.Type().(*arrow.Decimal128Type)
		if n, ok := decimalOfDouble(d, t.Precision, t.Scale); ok {
			x.Append(n)
		} else {
			x.AppendNull()
		}
	default:
		panic(fmt.Sprintf("vector: percentile_approx result of %s", TypeName(b.Type())))
	}
}

// javaDoubleToInt and javaDoubleToLong convert as Java's (int) and (long)
// casts: NaN to 0, saturating at the bounds.
func javaDoubleToInt(d float64) int32 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= math.MaxInt32:
		return math.MaxInt32
	case d <= math.MinInt32:
		return math.MinInt32
	}
	return int32(d)
}

func javaDoubleToLong(d float64) int64 {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= math.MaxInt64:
		return math.MaxInt64
	case d <= math.MinInt64:
		return math.MinInt64
	}
	return int64(d)
}

// decimalOfDouble is Decimal(d) (the double's shortest decimal digits)
// rounded HALF_UP to scale; false when it needs more than precision
// digits or d is not finite.
func decimalOfDouble(d float64, prec, scale int32) (decimal128.Num, bool) {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return decimal128.Num{}, false
	}
	s := strconv.FormatFloat(d, 'e', -1, 64)
	mant, exp, _ := cutByte(s, 'e')
	e, _ := strconv.Atoi(exp)
	neg := mant[0] == '-'
	if neg {
		mant = mant[1:]
	}
	digits := mant[:1] + mant[min(2, len(mant)):]
	fracScale := int32(len(digits)-1) - int32(e) // value = digits * 10^-fracScale
	n, err := decimal128.FromString(digits, 38, 0)
	if err != nil {
		return decimal128.Num{}, false
	}
	if neg {
		n = n.Negate()
	}
	if fracScale < 0 {
		n, ok := decimalRescale(n, 0, -fracScale+scale)
		if !ok {
			return decimal128.Num{}, false
		}
		return n, n.FitsInPrecision(prec)
	}
	r, ok := decimalRescale(n, fracScale, scale)
	if !ok || !r.FitsInPrecision(prec) {
		return decimal128.Num{}, false
	}
	return r, true
}

func cutByte(s string, c byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func (a *approxPctAcc) states(mem memory.Allocator, gids []int32) []arrow.Array {
	b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer b.Release()
	var buf []byte
	for _, g := range gids {
		s := newGKSummary(a.relErr)
		if int(g) < len(a.sums) && a.sums[g] != nil {
			s = a.sums[g]
		}
		buf = s.appendBinary(buf[:0])
		b.Append(buf)
	}
	typ := array.MakeArrayOfNull(mem, a.elem, len(gids))
	return []arrow.Array{b.NewArray(), typ}
}

func (a *approxPctAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return a.results(mem, groupRange(lo, hi))
}

func (a *approxPctAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return a.states(mem, groupRange(lo, hi)), nil
}

func (a *approxPctAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return a.states(mem, gids), nil
}

// reset empties groups gids.
func (a *approxPctAcc) reset(gids []int32) {
	for _, g := range gids {
		if int(g) < len(a.sums) {
			a.sums[g] = nil
		}
	}
}
