package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Sums whose overflow is checked per addition and whose average is
// exact: sum and avg of YEAR-MONTH and DAY-TIME intervals, and try_sum
// and try_avg of decimals and intervals. As Spark's Sum and Average over
// these types: a year-month sum is an int of months (it overflows past
// 2^31-1 months), a day-time sum a long of microseconds, a decimal sum has
// precision p+10 (at most 38); the average divides the sum by the count
// rounding HALF_UP (decimals: Spark's decimal division, see avgDecimal).
// sum and avg raise the overflow; try_sum and try_avg give NULL for the
// group instead. The partial state is (sum, count), the sum NULL once it
// overflowed, so merging keeps the group NULL (try) or raises (not try).
type exactSumAcc struct {
	aggInfo
	kind    exactKind
	avg     bool // avg/try_avg; sum/try_sum otherwise
	try     bool // overflow gives NULL, not an error
	merge   bool
	sumType arrow.DataType
	avgType *arrow.Decimal128Type // decimal averages' result type
	prec    int32                 // decimal sums' precision
	ints    []int64
	decs    []decimal128.Num
	counts  []int64
	over    []bool
}

type exactKind int

const (
	exactMonths exactKind = iota // interval year to month: int months
	exactMicros                  // interval day to second: long microseconds
	exactDecimal
)

// isIntervalType reports whether t is a year-month or day-time interval.
func isIntervalType(t arrow.DataType) bool {
	return t.ID() == arrow.INTERVAL_MONTHS || t.ID() == arrow.DURATION
}

// newExactSum binds an exact sum or average over values (or, merge, sums)
// of type t; false when t is not an interval or decimal.
func newExactSum(info aggInfo, t arrow.DataType, avg, try, merge bool) (*exactSumAcc, error) {
	s := &exactSumAcc{aggInfo: info, avg: avg, try: try, merge: merge}
	switch t.ID() {
	case arrow.INTERVAL_MONTHS:
		s.kind, s.sumType = exactMonths, t
	case arrow.DURATION:
		s.kind, s.sumType = exactMicros, t
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		s.kind = exactDecimal
		sum := d
		if !merge {
			sum, _ = avgDecimalTypes(d)
		}
		s.sumType, s.prec = sum, sum.Precision
		if avg {
			var err error
			if merge {
				if s.avgType, err = avgDecimalResultOfState(sum); err != nil {
					return nil, err
				}
			} else {
				_, s.avgType = avgDecimalTypes(d)
			}
		}
	default:
		return nil, fmt.Errorf("%s of %s is not supported: %w", info.label, TypeName(t), ErrType)
	}
	return s, nil
}

func (s *exactSumAcc) resize(n int) {
	if s.kind == exactDecimal {
		s.decs = growZero(s.decs, n)
	} else {
		s.ints = growZero(s.ints, n)
	}
	s.counts = growZero(s.counts, n)
	s.over = growZero(s.over, n)
}

func (s *exactSumAcc) heapBytes() int64 {
	return sliceBytes(s.ints) + sliceBytes(s.decs) + sliceBytes(s.counts) + sliceBytes(s.over)
}

func (s *exactSumAcc) resultType() arrow.DataType {
	if s.avgType != nil {
		return s.avgType
	}
	return s.sumType
}

func (s *exactSumAcc) stateTypes() []arrow.DataType {
	return []arrow.DataType{s.sumType, Int64}
}

// addInt adds v to group g's integer sum (bounded by lim), noting an
// overflow; false when it overflowed.
func (s *exactSumAcc) addInt(g int32, v int64) bool {
	sum := s.ints[g] + v
	bad := (s.ints[g] >= 0) == (v >= 0) && (sum >= 0) != (v >= 0)
	if s.kind == exactMonths {
		bad = sum > math.MaxInt32 || sum < math.MinInt32
	}
	if bad {
		s.over[g] = true
		return false
	}
	s.ints[g] = sum
	return true
}

func (s *exactSumAcc) addDec(g int32, v decimal128.Num) bool {
	r, ok := addDecimal(s.decs[g], v)
	if !ok || !r.FitsInPrecision(s.prec) {
		s.over[g] = true
		return false
	}
	s.decs[g] = r
	return true
}

// overflow reports the overflow at row i unless the function is a try_
// one (then the group is NULL).
func (s *exactSumAcc) overflow(i int, arg arrow.Array, g int32) error {
	if s.try {
		return nil
	}
	acc := fmt.Sprint(s.ints[g])
	if s.kind == exactDecimal {
		acc = s.decs[g].ToString(s.sumType.(*arrow.Decimal128Type).Scale)
	}
	return s.overflowError(i, arg, acc)
}

func (s *exactSumAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	bm, off := validity(arg)
	var counts []int64
	if s.merge {
		c, ok := args[1].(*array.Int64)
		if !ok {
			return fmt.Errorf("vector: %s state count of %s: %w", s.label, TypeName(args[1].DataType()), ErrType)
		}
		counts = c.Int64Values()
	}
	switch s.kind {
	case exactMonths, exactMicros:
		var ints32 []int32
		var ints64 []int64
		switch x := arg.(type) {
		case *array.MonthInterval:
			ints32 = rawValues[int32](x)
		case *array.Duration:
			ints64 = rawValues[int64](x)
		case *array.Null:
			return nil
		default:
			return fmt.Errorf("vector: %s of %s: %w", s.label, TypeName(arg.DataType()), ErrType)
		}
		for i, g := range gids {
			valid := bm == nil || bitSet(bm, off+i)
			if s.merge {
				s.counts[g] += counts[i]
				if !valid {
					s.over[g] = true
				}
			} else if !valid {
				continue
			} else {
				s.counts[g]++
			}
			if s.over[g] || !valid {
				continue
			}
			v := int64(0)
			if ints32 != nil {
				v = int64(ints32[i])
			} else {
				v = ints64[i]
			}
			if !s.addInt(g, v) {
				if err := s.overflow(i, arg, g); err != nil {
					return err
				}
			}
		}
	case exactDecimal:
		if _, ok := arg.(*array.Null); ok {
			return nil
		}
		x, ok := arg.(*array.Decimal128)
		if !ok {
			return fmt.Errorf("vector: %s of %s: %w", s.label, TypeName(arg.DataType()), ErrType)
		}
		vals := rawValues[decimal128.Num](x)
		for i, g := range gids {
			valid := bm == nil || bitSet(bm, off+i)
			if s.merge {
				s.counts[g] += counts[i]
				if !valid {
					s.over[g] = true
				}
			} else if !valid {
				continue
			} else {
				s.counts[g]++
			}
			if s.over[g] || !valid {
				continue
			}
			if !s.addDec(g, vals[i]) {
				if err := s.overflow(i, arg, g); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// results returns the final values (final) or the partial sums of groups
// gids.
func (s *exactSumAcc) results(mem memory.Allocator, gids []int32, final bool) (arrow.Array, error) {
	valid := make([]bool, len(gids))
	for i, g := range gids {
		valid[i] = !s.over[g] && (!final || s.counts[g] > 0)
	}
	switch {
	case s.kind == exactDecimal && final && s.avg:
		out := make([]decimal128.Num, len(gids))
		for i, g := range gids {
			if !valid[i] {
				continue
			}
			m, ok := avgDecimal(s.decs[g], s.counts[g], s.sumType.(*arrow.Decimal128Type), s.avgType)
			if !ok {
				if !s.try {
					return nil, fmt.Errorf("vector: %s: the mean does not fit %s: %w", s.label, TypeName(s.avgType), ErrOverflow)
				}
				valid[i] = false
				continue
			}
			out[i] = m
		}
		return newFixedArray(mem, s.avgType, out, valid), nil
	case s.kind == exactDecimal:
		return newFixedArray(mem, s.sumType, gatherOf(s.decs, gids), valid), nil
	}
	out := gatherOf(s.ints, gids)
	if final && s.avg {
		for i, g := range gids {
			if valid[i] {
				out[i] = divInt64HalfUp(out[i], s.counts[g])
			}
		}
	}
	if s.kind == exactMonths {
		return newFixedArray(mem, s.sumType, int64sToInt32s(out), valid), nil
	}
	return newFixedArray(mem, s.sumType, out, valid), nil
}

// divInt64HalfUp is a/b rounded HALF_UP (Guava's LongMath.divide, as Spark's
// interval division); b > 0.
func divInt64HalfUp(a, b int64) int64 {
	q, r := a/b, a%b
	if r < 0 {
		r = -r
	}
	if r >= b-r { // 2|r| >= b without overflow
		if a < 0 {
			q--
		} else {
			q++
		}
	}
	return q
}

func int64sToInt32s(src []int64) []int32 {
	out := make([]int32, len(src))
	for i, v := range src {
		out[i] = int32(v)
	}
	return out
}

func (s *exactSumAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return s.results(mem, groupRange(lo, hi), true)
}

func (s *exactSumAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	return s.stateAt(mem, groupRange(lo, hi), rows)
}

func (s *exactSumAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	sums, err := s.results(mem, gids, false)
	if err != nil {
		return nil, err
	}
	return []arrow.Array{sums, newFixedArray(mem, Int64, gatherOf(s.counts, gids), nil)}, nil
}

func (s *exactSumAcc) reset(gids []int32) {
	for _, g := range gids {
		if s.kind == exactDecimal {
			s.decs[g] = decimal128.Num{}
		} else {
			s.ints[g] = 0
		}
		s.counts[g], s.over[g] = 0, false
	}
}

// tryAvgFloat is try_avg of numbers other than decimals: avg's double
// sum cannot overflow, so it is avg under another name.
type tryAvgFloat struct{ *sumAcc }

func (t tryAvgFloat) stateTypes() []arrow.DataType { return []arrow.DataType{Float64, Int64} }

// bindTryAverage binds try_avg over values of type t, or try_sum over
// decimals and intervals.
func bindTryAverage(call AggregateCall, mem memory.Allocator, ev Evaluator, t arrow.DataType) (*boundAgg, error) {
	info := aggInfo{label: call.String()}
	for _, a := range call.Args {
		info.args = append(info.args, a.String())
	}
	avg := call.Func == AggTryAvg
	arg := Plain(ev, mem)
	if isIntervalType(t) || t.ID() == arrow.DECIMAL128 {
		acc, err := newExactSum(info, t, avg, true, false)
		if err != nil {
			return nil, err
		}
		return &boundAgg{args: []Evaluator{arg}, acc: acc, result: arrow.Field{Type: acc.resultType(), Nullable: true}}, nil
	}
	if !IsNumeric(t) && t.ID() != arrow.NULL {
		return nil, fmt.Errorf("function %s requires a numeric or interval argument, not %s: %w", call.Func, TypeName(t), ErrType)
	}
	acc := &sumAcc{aggInfo: info, kind: sumFloat, resType: Float64, avg: true}
	return &boundAgg{args: []Evaluator{arg}, acc: tryAvgFloat{acc}, result: arrow.Field{Type: Float64, Nullable: true}}, nil
}

// bindTryAverageState binds try_avg (or try_sum of decimals and
// intervals) over its partial state (sum, count).
func bindTryAverageState(call AggregateCall, types []arrow.DataType) (accumulator, arrow.DataType, error) {
	if len(types) != 2 || types[1].ID() != arrow.INT64 {
		return nil, nil, fmt.Errorf("partial state of %s must be (sum, bigint), not %s: %w", call.Func, typeList(types), ErrType)
	}
	info := aggInfo{label: call.String()}
	if types[0].ID() == arrow.FLOAT64 && call.Func == AggTryAvg {
		acc := &sumAcc{aggInfo: info, kind: sumFloat, resType: Float64, avg: true, merge: true}
		return tryAvgFloat{acc}, Float64, nil
	}
	acc, err := newExactSum(info, types[0], call.Func == AggTryAvg, true, true)
	if err != nil {
		return nil, nil, err
	}
	return acc, acc.resultType(), nil
}
