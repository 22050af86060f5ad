package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The aggregate functions beyond the core ones of aggregate.go. Each is
// bound through extAggs: its arity, its partial state parts, and the
// accumulators for input rows and for partial state.

// The statistical aggregates (see aggregate_stats.go). Functions that
// Spark names by the alias used (stddev, std, variance) have their own
// constant so that the output column is named as in Spark.
const (
	// AggStddevSamp is the sample standard deviation: stddev_samp(x).
	AggStddevSamp AggFunc = AggApproxCountDistinct + 1 + iota
	// AggStddev is stddev(x), stddev_samp under its other name.
	AggStddev
	// AggStd is std(x), stddev_samp under its other name.
	AggStd
	// AggStddevPop is the population standard deviation.
	AggStddevPop
	// AggVarSamp is the sample variance: var_samp(x).
	AggVarSamp
	// AggVariance is variance(x), var_samp under its other name.
	AggVariance
	// AggVarPop is the population variance.
	AggVarPop
	// AggSkewness is the skewness of the values.
	AggSkewness
	// AggKurtosis is the excess kurtosis of the values.
	AggKurtosis
	// AggCovarPop is the population covariance of pairs.
	AggCovarPop
	// AggCovarSamp is the sample covariance of pairs.
	AggCovarSamp
	// AggCorr is Pearson's correlation coefficient of pairs.
	AggCorr
	// AggRegrSXX is regr_sxx(y, x): the sum of squared deviations of x over
	// the non-null pairs.
	AggRegrSXX
	// AggRegrSYY is regr_syy(y, x): the same of y.
	AggRegrSYY
	// AggRegrSXY is regr_sxy(y, x): the sum of products of deviations.
	AggRegrSXY
	// AggRegrR2 is regr_r2(y, x): the coefficient of determination.
	AggRegrR2
	// AggRegrSlope is regr_slope(y, x): the slope of the least-squares line.
	AggRegrSlope
	// AggRegrIntercept is regr_intercept(y, x): its intercept.
	AggRegrIntercept

	// AggBitAnd is the bitwise AND of the non-null integral values.
	AggBitAnd
	// AggBitOr is their bitwise OR.
	AggBitOr
	// AggBitXor is their bitwise XOR.
	AggBitXor
	// AggTrySum is try_sum(x): sum, NULL instead of a bigint overflow.
	AggTrySum
	// AggMaxBy is max_by(x, ord): x on the row of the greatest ord.
	AggMaxBy
	// AggMinBy is min_by(x, ord): x on the row of the least ord.
	AggMinBy
	// AggTryAvg is try_avg(x): avg, NULL instead of an overflow.
	AggTryAvg
	// AggCollectList is collect_list(x) (array_agg): the non-null values
	// in input order.
	AggCollectList
	// AggPercentile is the exact percentile with linear interpolation:
	// percentile(x, p [, frequency]), median(x), percentile_cont(p)
	// WITHIN GROUP (ORDER BY x).
	AggPercentile
	// AggPercentileDesc is percentile_cont(p) WITHIN GROUP (ORDER BY x DESC).
	AggPercentileDesc
	// AggPercentileDisc is percentile_disc(p) WITHIN GROUP (ORDER BY x):
	// the lower value instead of an interpolation.
	AggPercentileDisc
	// AggPercentileDiscDesc is percentile_disc ordered DESC.
	AggPercentileDiscDesc
	// AggApproxPercentile is percentile_approx(x, p [, accuracy]) (and
	// approx_percentile): Spark's Greenwald-Khanna summary.
	AggApproxPercentile
	// AggCollectSet is collect_set(x): the distinct non-null values in
	// Spark's hash-set order.
	AggCollectSet
	// AggMostFrequent is mode(x): the most frequent value, ties in the order of
	// Spark's hash map.
	AggMostFrequent
	// AggMostFrequentLow is mode(x, true) and mode() WITHIN GROUP (ORDER BY x):
	// ties to the lowest value.
	AggMostFrequentLow
	// AggMostFrequentHigh is mode() WITHIN GROUP (ORDER BY x DESC): ties to the
	// highest value.
	AggMostFrequentHigh
	// AggHistogramNumeric is histogram_numeric(x, nb): Spark's streaming
	// histogram of nb bins.
	AggHistogramNumeric

	aggFuncEnd // one past the last aggregate function
)

var extAggNames = map[AggFunc]string{
	AggStddevSamp: "stddev_samp", AggStddev: "stddev", AggStd: "std", AggStddevPop: "stddev_pop",
	AggVarSamp: "var_samp", AggVariance: "variance", AggVarPop: "var_pop",
	AggSkewness: "skewness", AggKurtosis: "kurtosis",
	AggCovarPop: "covar_pop", AggCovarSamp: "covar_samp", AggCorr: "corr",
	AggRegrSXX: "regr_sxx", AggRegrSYY: "regr_syy", AggRegrSXY: "regr_sxy", AggRegrR2: "regr_r2",
	AggRegrSlope: "regr_slope", AggRegrIntercept: "regr_intercept",
	AggBitAnd: "bit_and", AggBitOr: "bit_or", AggBitXor: "bit_xor", AggTrySum: "try_sum",
	AggMaxBy: "max_by", AggMinBy: "min_by", AggTryAvg: "try_avg",
	AggCollectList: "collect_list",
	AggPercentile:  "percentile", AggPercentileDesc: "percentile_cont", AggPercentileDisc: "percentile_disc",
	AggPercentileDiscDesc: "percentile_disc", AggApproxPercentile: "percentile_approx",
	AggCollectSet: "collect_set", AggMostFrequent: "mode", AggMostFrequentLow: "mode", AggMostFrequentHigh: "mode",
	AggHistogramNumeric: "histogram_numeric",
}

// AggFuncByName returns the aggregate function of a lower-case name among
// those beyond the core ones (the planner maps the core names itself).
func AggFuncByName(name string) (AggFunc, bool) {
	for f, n := range extAggNames {
		if n == name {
			return f, true
		}
	}
	return 0, false
}

// IsStatistical reports whether f is one of the statistical aggregates,
// whose arguments are converted to double.
func IsStatistical(f AggFunc) bool {
	_, ok := statFuncs[f]
	return ok
}

func (f AggFunc) valid() bool { return f >= AggCountStar && f < aggFuncEnd }

// extArity checks the number of arguments of an extended aggregate; false
// when f is a core one.
func extArity(call AggregateCall) (bool, error) {
	if sf, ok := statFuncs[call.Func]; ok {
		if len(call.Args) != sf.nargs {
			return true, fmt.Errorf("%s takes %d argument(s), got %d", call.Func, sf.nargs, len(call.Args))
		}
		return true, nil
	}
	if _, ok := bitFuncs[call.Func]; ok || call.Func == AggTrySum || call.Func == AggTryAvg || call.Func == AggCollectList || call.Func == AggCollectSet || isMode(call.Func) {
		if len(call.Args) != 1 {
			return true, fmt.Errorf("%s takes 1 argument, got %d", call.Func, len(call.Args))
		}
		return true, nil
	}
	if call.Func == AggMaxBy || call.Func == AggMinBy || call.Func == AggHistogramNumeric {
		if len(call.Args) != 2 {
			return true, fmt.Errorf("%s takes 2 arguments, got %d", call.Func, len(call.Args))
		}
		return true, nil
	}
	if isPercentile(call.Func) || call.Func == AggApproxPercentile {
		if len(call.Args) != 2 && len(call.Args) != 3 {
			return true, fmt.Errorf("%s takes 2 or 3 arguments, got %d", call.Func, len(call.Args))
		}
		return true, nil
	}
	return false, nil
}

// extStateParts lists the partial state columns of an extended aggregate.
func extStateParts(f AggFunc) []string {
	if sf, ok := statFuncs[f]; ok {
		return sf.parts()
	}
	if _, ok := bitFuncs[f]; ok {
		return []string{statePartValue}
	}
	if f == AggTrySum {
		return []string{statePartValue, statePartSet}
	}
	if f == AggMaxBy || f == AggMinBy {
		return []string{statePartValue, statePartOrdering}
	}
	if f == AggTryAvg {
		return []string{statePartValue, statePartCount}
	}
	if f == AggCollectList || f == AggCollectSet {
		return []string{statePartValue}
	}
	if isPercentile(f) || isMode(f) {
		return []string{statePartValue, statePartCount}
	}
	if f == AggApproxPercentile || f == AggHistogramNumeric {
		return []string{statePartDigest, statePartValue}
	}
	return nil
}

// extDistinct reports whether DISTINCT changes the result of f (a
// per-group set of the argument tuples is kept).
func extDistinct(f AggFunc) bool {
	if isPercentile(f) || f == AggApproxPercentile {
		return true
	}
	sf, ok := statFuncs[f]
	// regr_slope and regr_intercept also count rows where only x is set,
	// which the distinct set (of non-null tuples) would drop.
	return ok && sf.fam != famRegr
}

// stateTyper is an accumulator that knows its partial state's types.
type stateTyper interface {
	stateTypes() []arrow.DataType
}

func (s *statAcc) stateTypes() []arrow.DataType {
	t := make([]arrow.DataType, len(s.st))
	for i := range t {
		t[i] = Float64
	}
	return t
}

// newExtRawAggregate binds an extended aggregate over input rows.
func newExtRawAggregate(in *arrow.Schema, mem memory.Allocator, call AggregateCall, evs []Evaluator, types []arrow.DataType) (*boundAgg, error) {
	if _, ok := statFuncs[call.Func]; ok {
		if call.Distinct && !extDistinct(call.Func) {
			return nil, aggBindError(call, in, fmt.Errorf("DISTINCT is not supported with %s: %w", call.Func, ErrType))
		}
		args := make([]Evaluator, len(evs))
		for i, ev := range evs {
			if !IsNumeric(types[i]) && types[i].ID() != arrow.NULL {
				return nil, aggBindError(call, in, fmt.Errorf("function %s requires numeric arguments, not %s: %w", call.Func, TypeName(types[i]), ErrType))
			}
			w, err := toFloat64Evaluator(Plain(ev, mem), types[i], mem)
			if err != nil {
				return nil, aggBindError(call, in, err)
			}
			args[i] = w
		}
		return &boundAgg{args: args, acc: newStatAcc(call.Func, false), result: arrow.Field{Type: Float64, Nullable: true}}, nil
	}
	if _, ok := bitFuncs[call.Func]; ok {
		acc, err := bindBitAggregate(call.Func, types[0])
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return &boundAgg{args: []Evaluator{Plain(evs[0], mem)}, acc: acc, result: arrow.Field{Type: types[0], Nullable: true}}, nil
	}
	if call.Func == AggTryAvg || call.Func == AggTrySum && (isIntervalType(types[0]) || types[0].ID() == arrow.DECIMAL128) {
		b, err := bindTryAverage(call, mem, evs[0], types[0])
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return b, nil
	}
	if call.Func == AggTrySum {
		acc, err := bindTrySum(types[0])
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		arg := Plain(evs[0], mem)
		if acc.float && types[0].ID() == arrow.FLOAT32 {
			if arg, err = numericWiden(arg, Float64, mem, sqlText{}, sqlText{}); err != nil {
				return nil, aggBindError(call, in, err)
			}
		}
		return &boundAgg{args: []Evaluator{arg}, acc: acc, result: arrow.Field{Type: acc.resultType(), Nullable: true}}, nil
	}
	if call.Func == AggCollectList {
		acc, err := bindCollectList(types[0], false)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return &boundAgg{args: []Evaluator{Plain(evs[0], mem)}, acc: acc, result: arrow.Field{Type: acc.resultType()}}, nil
	}
	if call.Func == AggHistogramNumeric {
		c, ok := evs[1].(ConstantEvaluator)
		if !ok {
			return nil, aggBindError(call, in, fmt.Errorf("histogram_numeric needs the nBins provided must be a constant literal: %w", ErrType))
		}
		acc, err := bindHistogram(types[0], c.Value(), false)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return &boundAgg{args: []Evaluator{Plain(evs[0], mem)}, acc: acc, result: arrow.Field{Type: acc.resultType(), Nullable: true}}, nil
	}
	if isMode(call.Func) {
		acc, err := bindMode(types[0], modeTie(call.Func), false)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return &boundAgg{args: []Evaluator{Plain(evs[0], mem)}, acc: acc, result: arrow.Field{Type: types[0], Nullable: true}}, nil
	}
	if call.Func == AggCollectSet {
		acc, err := bindCollectSet(types[0], false)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return &boundAgg{args: []Evaluator{Plain(evs[0], mem)}, acc: acc, result: arrow.Field{Type: acc.resultType()}}, nil
	}
	if call.Func == AggMaxBy || call.Func == AggMinBy {
		acc, err := bindMaxBy(call.Func == AggMaxBy, types[0], types[1])
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		return &boundAgg{args: []Evaluator{Plain(evs[0], mem), Plain(evs[1], mem)}, acc: acc, result: arrow.Field{Type: types[0], Nullable: true}}, nil
	}
	if isPercentile(call.Func) {
		return bindPercentileRaw(in, mem, call, evs, types)
	}
	if call.Func == AggApproxPercentile {
		return bindApproxPercentileRaw(in, mem, call, evs, types)
	}
	return nil, aggBindError(call, in, fmt.Errorf("unknown aggregate function %d", int(call.Func)))
}

// toFloat64Evaluator converts a numeric (or NULL-typed) evaluator to
// double.
func toFloat64Evaluator(ev Evaluator, t arrow.DataType, mem memory.Allocator) (Evaluator, error) {
	if t.ID() == arrow.NULL {
		return newConst(Float64, nil, mem), nil
	}
	return numericWiden(ev, Float64, mem, sqlText{}, sqlText{})
}

// bindExtStateAggregate binds an extended aggregate over its partial state
// columns (of types).
func bindExtStateAggregate(call AggregateCall, types []arrow.DataType) (accumulator, arrow.DataType, error) {
	if _, ok := statFuncs[call.Func]; ok {
		for _, t := range types {
			if t.ID() != arrow.FLOAT64 {
				return nil, nil, fmt.Errorf("partial state of %s must be doubles, not %s: %w", call.Func, typeList(types), ErrType)
			}
		}
		return newStatAcc(call.Func, true), Float64, nil
	}
	if _, ok := bitFuncs[call.Func]; ok {
		acc, err := bindBitAggregate(call.Func, types[0])
		if err != nil {
			return nil, nil, err
		}
		return acc, types[0], nil
	}
	if call.Func == AggTryAvg || call.Func == AggTrySum && len(types) == 2 && types[1].ID() == arrow.INT64 {
		return bindTryAverageState(call, types)
	}
	if call.Func == AggTrySum {
		if len(types) != 2 || types[1].ID() != arrow.BOOL || types[0].ID() != arrow.INT64 && types[0].ID() != arrow.FLOAT64 {
			return nil, nil, fmt.Errorf("partial state of try_sum must be (bigint|double, boolean), not %s: %w", typeList(types), ErrType)
		}
		acc := &trySumAcc{float: types[0].ID() == arrow.FLOAT64, merge: true}
		return acc, acc.resultType(), nil
	}
	if call.Func == AggCollectList {
		l, ok := types[0].(*arrow.ListType)
		if len(types) != 1 || !ok {
			return nil, nil, fmt.Errorf("partial state of collect_list must be (array), not %s: %w", typeList(types), ErrType)
		}
		acc, err := bindCollectList(l.Elem(), true)
		if err != nil {
			return nil, nil, err
		}
		return acc, acc.resultType(), nil
	}
	if call.Func == AggHistogramNumeric {
		l, ok := call.Args[1].(*Literal)
		if len(types) != 2 || !ok {
			return nil, nil, fmt.Errorf("partial state of histogram_numeric must be (bins, input type) with a literal nBins, not %s: %w", typeList(types), ErrType)
		}
		acc, err := bindHistogram(types[1], l.Value, true)
		if err != nil {
			return nil, nil, err
		}
		return acc, acc.resultType(), nil
	}
	if isMode(call.Func) {
		l, ok := types[0].(*arrow.ListType)
		if len(types) != 2 || !ok {
			return nil, nil, fmt.Errorf("partial state of mode must be (array, array<bigint>), not %s: %w", typeList(types), ErrType)
		}
		acc, err := bindMode(l.Elem(), modeTie(call.Func), true)
		if err != nil {
			return nil, nil, err
		}
		return acc, l.Elem(), nil
	}
	if call.Func == AggCollectSet {
		l, ok := types[0].(*arrow.ListType)
		if len(types) != 1 || !ok {
			return nil, nil, fmt.Errorf("partial state of collect_set must be (array), not %s: %w", typeList(types), ErrType)
		}
		acc, err := bindCollectSet(l.Elem(), true)
		if err != nil {
			return nil, nil, err
		}
		return acc, acc.resultType(), nil
	}
	if isPercentile(call.Func) {
		return bindPercentileState(call, types)
	}
	if call.Func == AggApproxPercentile {
		return bindApproxPercentileState(call, types)
	}
	if call.Func == AggMaxBy || call.Func == AggMinBy {
		if len(types) != 2 {
			return nil, nil, fmt.Errorf("partial state of %s must be (value, ordering), not %s: %w", call.Func, typeList(types), ErrType)
		}
		acc, err := bindMaxBy(call.Func == AggMaxBy, types[0], types[1])
		if err != nil {
			return nil, nil, err
		}
		return acc, types[0], nil
	}
	return nil, nil, fmt.Errorf("unknown aggregate function %d", int(call.Func))
}

// statArgTypes are the types of a statistical aggregate's converted
// arguments.
func statArgTypes(args []Evaluator) []arrow.DataType {
	t := make([]arrow.DataType, len(args))
	for i, a := range args {
		t[i] = Unwrap(a.DataType())
	}
	return t
}
