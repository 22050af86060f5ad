package vector

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The exact percentiles, as Spark's PercentileBase: percentile(x, p [,
// frequency]), median(x), percentile_cont(p) WITHIN GROUP (ORDER BY x
// [DESC]) and percentile_disc(p) WITHIN GROUP (...). Each group keeps its
// (value, frequency) pairs in typed slot buffers shared by all groups; the
// result sorts each group's pairs once, accumulates the frequencies and
// reads the value at position (n-1)*p, interpolating linearly between the
// two neighbouring values (percentile, percentile_cont) or taking the lower
// one (percentile_disc). Integral values and ANSI intervals are kept as
// int64 (months or microseconds), floats as float64 and decimals as
// decimal128, so that values are compared exactly and converted to double
// only for the answer, as Spark's toDoubleValue does.
//
// The partial state is two lists per group: the values (bigint, double or
// the decimal type) and their frequencies (bigint).

// pctKind is how a percentile's values are stored.
type pctKind uint8

const (
	pctInt pctKind = iota
	pctFloat
	pctDecimal
)

// pctKindOf is the storage of values of type t; false when t has none.
func pctKindOf(t arrow.DataType) (pctKind, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.INTERVAL_MONTHS, arrow.DURATION:
		return pctInt, true
	case arrow.FLOAT32, arrow.FLOAT64:
		return pctFloat, true
	case arrow.DECIMAL128:
		return pctDecimal, true
	}
	return 0, false
}

type percentileAcc struct {
	aggInfo
	kind     pctKind
	scale    int32          // decimal values
	valType  arrow.DataType // the state's element type
	pcts     []float64
	array    bool // the result is array<double>
	discrete bool // percentile_disc: no interpolation
	reverse  bool // ORDER BY ... DESC
	merge    bool
	hasFreq  bool // a frequency argument follows the value

	// The slots: the value and frequency of each, and its group.
	ints   []int64
	floats []float64
	decs   []decimal128.Num
	freqs  []int64
	owners []int32
	ngroup int

	rows []int32 // scratch
}

// PercentileParams are the constant parameters of an exact percentile.
type percentileParams struct {
	pcts     []float64
	array    bool
	discrete bool
	reverse  bool
}

// percentileParamsOf reads the percentage argument (a constant double or
// array of doubles) of call.
func percentileParamsOf(call AggregateCall, pct any) (percentileParams, error) {
	p := percentileParams{discrete: call.Func == AggPercentileDisc || call.Func == AggPercentileDiscDesc,
		reverse: call.Func == AggPercentileDesc || call.Func == AggPercentileDiscDesc}
	switch v := pct.(type) {
	case float64:
		p.pcts = []float64{v}
	case []any:
		p.array = true
		for _, e := range v {
			f, ok := e.(float64)
			if !ok {
				return p, fmt.Errorf("the percentages of %s must be non-null doubles, not %v: %w", call.Func, pct, ErrType)
			}
			p.pcts = append(p.pcts, f)
		}
	default:
		return p, fmt.Errorf("the percentage of %s must be a constant double or array of doubles, not %v: %w", call.Func, pct, ErrType)
	}
	for _, f := range p.pcts {
		if !(f >= 0 && f <= 1) {
			return p, fmt.Errorf("the percentage(s) of %s must be between 0.0 and 1.0, not %v: %w", call.Func, f, ErrType)
		}
	}
	return p, nil
}

func (p percentileParams) resultType() arrow.DataType {
	if p.array {
		return ListOf(Float64)
	}
	return Float64
}

// isPercentile reports whether f is one of the exact percentiles.
func isPercentile(f AggFunc) bool {
	return f == AggPercentile || f == AggPercentileDesc || f == AggPercentileDisc || f == AggPercentileDiscDesc
}

// bindPercentile binds an exact percentile over values of type t (merge:
// over its partial state, whose value element type t is).
func bindPercentile(info aggInfo, p percentileParams, t arrow.DataType, hasFreq, merge bool) (*percentileAcc, error) {
	kind, ok := pctKindOf(t)
	if !ok {
		return nil, fmt.Errorf("percentile of %s is not supported (numbers and ANSI intervals are): %w", TypeName(t), ErrType)
	}
	a := &percentileAcc{aggInfo: info, kind: kind, pcts: p.pcts, array: p.array, discrete: p.discrete, reverse: p.reverse, merge: merge, hasFreq: hasFreq}
	switch kind {
	case pctInt:
		a.valType = Int64
	case pctFloat:
		a.valType = Float64
	case pctDecimal:
		a.valType = t
		a.scale = t.(*arrow.Decimal128Type).Scale
	}
	return a, nil
}

func (a *percentileAcc) resize(n int) { a.ngroup = max(a.ngroup, n) }

func (a *percentileAcc) heapBytes() int64 {
	return sliceBytes(a.ints) + sliceBytes(a.floats) + sliceBytes(a.decs) + sliceBytes(a.freqs) + sliceBytes(a.owners) + sliceBytes(a.rows)
}

func (a *percentileAcc) resultType() arrow.DataType {
	return percentileParams{array: a.array}.resultType()
}

func (a *percentileAcc) stateTypes() []arrow.DataType {
	return []arrow.DataType{ListOf(a.valType), ListOf(Int64)}
}

// appendInts appends rows of an integral (or interval) column as int64.
func appendInts(dst []int64, v arrow.Array, rows []int32) []int64 {
	switch x := v.(type) {
	case *array.Int8:
		return appendConv(dst, x.Int8Values(), rows)
	case *array.Int16:
		return appendConv(dst, x.Int16Values(), rows)
	case *array.Int32:
		return appendConv(dst, x.Int32Values(), rows)
	case *array.Int64:
		return appendConv(dst, x.Int64Values(), rows)
	case *array.MonthInterval:
		return appendConv(dst, x.MonthIntervalValues(), rows)
	case *array.Duration:
		return appendConv(dst, x.DurationValues(), rows)
	}
	panic(fmt.Sprintf("vector: percentile of %s", TypeName(v.DataType())))
}

func appendConv[S ~int8 | ~int16 | ~int32 | ~int64](dst []int64, src []S, rows []int32) []int64 {
	for _, r := range rows {
		dst = append(dst, int64(src[r]))
	}
	return dst
}

// add appends the values of rows of v to groups, with frequencies freq
// (nil: 1 each).
func (a *percentileAcc) add(v arrow.Array, rows, groups []int32, freq []int64) {
	switch a.kind {
	case pctInt:
		a.ints = appendInts(a.ints, v, rows)
	case pctFloat:
		switch x := v.(type) {
		case *array.Float32:
			for _, r := range rows {
				a.floats = append(a.floats, float64(x.Value(int(r))))
			}
		case *array.Float64:
			vals := x.Float64Values()
			for _, r := range rows {
				a.floats = append(a.floats, vals[r])
			}
		}
	case pctDecimal:
		vals := v.(*array.Decimal128).Values()
		for _, r := range rows {
			a.decs = append(a.decs, vals[r])
		}
	}
	a.owners = append(a.owners, groups...)
	if freq == nil {
		for range rows {
			a.freqs = append(a.freqs, 1)
		}
	} else {
		a.freqs = append(a.freqs, freq...)
	}
}

// frequencies reads an integral frequency column as int64 (NULL rows
// read as whatever their slot holds).
func frequencies(v arrow.Array) []int64 {
	rows := make([]int32, v.Len())
	for i := range rows {
		rows[i] = int32(i)
	}
	return appendInts(make([]int64, 0, v.Len()), v, rows)
}

func (a *percentileAcc) update(gids []int32, args []arrow.Array) error {
	if a.merge {
		return a.mergeState(gids, args)
	}
	v := args[0]
	if v.DataType().ID() == arrow.NULL {
		return nil
	}
	bm, off := validity(v)
	var freq, fsel []int64
	var fbm []byte
	var foff int
	if a.hasFreq {
		if args[1].DataType().ID() == arrow.NULL {
			return nil
		}
		freq = frequencies(args[1])
		fbm, foff = validity(args[1])
	}
	rows, groups := a.rows[:0], make([]int32, 0, len(gids))
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		if freq != nil {
			if fbm != nil && !bitSet(fbm, foff+i) {
				continue
			}
			switch f := freq[i]; {
			case f < 0:
				name := "frequency"
				if len(a.args) > 2 {
					name = a.args[2]
				}
				return &EvalError{Expr: a.label, Row: i, Err: fmt.Errorf("Negative values found in %s", name)}
			case f == 0:
				continue
			}
			fsel = append(fsel, freq[i])
		}
		rows, groups = append(rows, int32(i)), append(groups, g)
	}
	a.rows = rows
	a.add(v, rows, groups, fsel)
	return nil
}

// mergeState folds partial states: lists of values and of frequencies.
func (a *percentileAcc) mergeState(gids []int32, args []arrow.Array) error {
	vl, ok1 := args[0].(*array.List)
	fl, ok2 := args[1].(*array.List)
	if !ok1 || !ok2 {
		return fmt.Errorf("vector: percentile state of %s: %w", typeList([]arrow.DataType{args[0].DataType(), args[1].DataType()}), ErrType)
	}
	voffs, foffs := vl.Offsets(), fl.Offsets()
	fvals := frequencies(fl.ListValues())
	rows, groups, freq := a.rows[:0], make([]int32, 0, len(gids)), make([]int64, 0, len(gids))
	for i, g := range gids {
		if vl.IsNull(i) || fl.IsNull(i) {
			continue
		}
		if voffs[i+1]-voffs[i] != foffs[i+1]-foffs[i] {
			return fmt.Errorf("vector: percentile state row %d has %d values and %d frequencies: %w", i, voffs[i+1]-voffs[i], foffs[i+1]-foffs[i], ErrType)
		}
		for r := voffs[i]; r < voffs[i+1]; r++ {
			rows, groups = append(rows, r), append(groups, g)
			freq = append(freq, fvals[foffs[i]+r-voffs[i]])
		}
	}
	a.rows = rows
	a.add(vl.ListValues(), rows, groups, freq)
	return nil
}

// slotsOf returns, for groups gids, the slots of each group in order:
// slots[start[i]:start[i+1]] are group gids[i]'s.
func (a *percentileAcc) slotsOf(gids []int32) (slots, start []int32) {
	pos := make(map[int32]int32, len(gids))
	for i, g := range gids {
		pos[g] = int32(i)
	}
	start = make([]int32, len(gids)+1)
	for _, g := range a.owners {
		if i, ok := pos[g]; ok {
			start[i+1]++
		}
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	slots = make([]int32, start[len(gids)])
	next := slices.Clone(start[:len(gids)])
	for s, g := range a.owners {
		if i, ok := pos[g]; ok {
			slots[next[i]] = int32(s)
			next[i]++
		}
	}
	return slots, start
}

// pctPair is a value and its frequency.
type pctPair[T any] struct {
	v T
	f int64
}

// pctGroups computes the percentiles of every group: out[i*len(pcts)+j]
// is group i's percentile j; valid[i] is false for a group without values.
func pctGroups[T any](vals []T, freqs []int64, slots, start []int32, cmp func(x, y T) int, eq func(x, y T) bool, toF func(T) float64, pcts []float64, discrete, reverse bool) (out []float64, valid []bool) {
	n := len(start) - 1
	out = make([]float64, n*len(pcts))
	valid = make([]bool, n)
	var pairs []pctPair[T]
	var acc []int64
	for i := 0; i < n; i++ {
		s, e := start[i], start[i+1]
		if s == e {
			continue
		}
		valid[i] = true
		pairs = pairs[:0]
		for _, sl := range slots[s:e] {
			pairs = append(pairs, pctPair[T]{vals[sl], freqs[sl]})
		}
		if reverse {
			slices.SortStableFunc(pairs, func(x, y pctPair[T]) int { return cmp(y.v, x.v) })
		} else {
			slices.SortStableFunc(pairs, func(x, y pctPair[T]) int { return cmp(x.v, y.v) })
		}
		acc = acc[:0]
		var total int64
		for _, p := range pairs {
			total += p.f
			acc = append(acc, total)
		}
		maxPos := total - 1
		for j, pct := range pcts {
			out[i*len(pcts)+j] = pctAt(pairs, acc, float64(maxPos)*pct, eq, toF, discrete)
		}
	}
	return out, valid
}

// pctAt is the percentile at position (0-based, in units of rows) of
// sorted pairs whose accumulated frequencies are acc, as Spark's
// getPercentile.
func pctAt[T any](pairs []pctPair[T], acc []int64, position float64, eq func(x, y T) bool, toF func(T) float64, discrete bool) float64 {
	lower, higher := int64(math.Floor(position)), int64(math.Ceil(position))
	// The first pair whose accumulated count exceeds the position.
	lo := sort.Search(len(acc), func(k int) bool { return acc[k] >= lower+1 })
	hi := sort.Search(len(acc), func(k int) bool { return acc[k] >= higher+1 })
	lk := pairs[lo].v
	if higher == lower {
		return toF(lk)
	}
	hk := pairs[hi].v
	if eq(hk, lk) || discrete {
		return toF(lk)
	}
	return (float64(higher)-position)*toF(lk) + (position-float64(lower))*toF(hk)
}

func cmpInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// cmpSparkDouble orders doubles as Spark's DoubleType ordering: NaN
// greatest, -0.0 equal to 0.0.
func cmpSparkDouble(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	}
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	}
	return -1
}

// compute returns the percentiles of groups gids.
func (a *percentileAcc) compute(gids []int32) ([]float64, []bool) {
	slots, start := a.slotsOf(gids)
	switch a.kind {
	case pctInt:
		return pctGroups(a.ints, a.freqs, slots, start, cmpInt64, func(x, y int64) bool { return x == y },
			func(x int64) float64 { return float64(x) }, a.pcts, a.discrete, a.reverse)
	case pctFloat:
		// Scala's == on boxed doubles: numeric equality.
		return pctGroups(a.floats, a.freqs, slots, start, cmpSparkDouble, func(x, y float64) bool { return x == y },
			func(x float64) float64 { return x }, a.pcts, a.discrete, a.reverse)
	default:
		scale := a.scale
		return pctGroups(a.decs, a.freqs, slots, start, func(x, y decimal128.Num) int { return x.Cmp(y) },
			func(x, y decimal128.Num) bool { return x == y },
			func(x decimal128.Num) float64 { return decimalToFloat64(x, scale) }, a.pcts, a.discrete, a.reverse)
	}
}

func (a *percentileAcc) results(mem memory.Allocator, gids []int32) arrow.Array {
	vals, valid := a.compute(gids)
	if !a.array {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		return b.NewArray()
	}
	b := array.NewListBuilder(mem, Float64)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float64Builder)
	k := len(a.pcts)
	for i, ok := range valid {
		if !ok {
			b.AppendNull()
			continue
		}
		b.Append(true)
		vb.AppendValues(vals[i*k:(i+1)*k], nil)
	}
	return b.NewArray()
}

// states builds the partial state lists of groups gids.
func (a *percentileAcc) states(mem memory.Allocator, gids []int32) []arrow.Array {
	slots, start := a.slotsOf(gids)
	vb := array.NewListBuilder(mem, a.valType)
	defer vb.Release()
	fb := array.NewListBuilder(mem, Int64)
	defer fb.Release()
	fvals := fb.ValueBuilder().(*array.Int64Builder)
	for i := range gids {
		vb.Append(true)
		fb.Append(true)
		for _, s := range slots[start[i]:start[i+1]] {
			switch a.kind {
			case pctInt:
				vb.ValueBuilder().(*array.Int64Builder).Append(a.ints[s])
			case pctFloat:
				vb.ValueBuilder().(*array.Float64Builder).Append(a.floats[s])
			default:
				vb.ValueBuilder().(*array.Decimal128Builder).Append(a.decs[s])
			}
			fvals.Append(a.freqs[s])
		}
	}
	return []arrow.Array{vb.NewArray(), fb.NewArray()}
}

func (a *percentileAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return a.results(mem, groupRange(lo, hi)), nil
}

func (a *percentileAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return a.states(mem, groupRange(lo, hi)), nil
}

func (a *percentileAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return a.states(mem, gids), nil
}

// bindPercentileRaw binds an exact percentile over input rows: the value,
// the constant percentage(s) and an optional integral frequency.
func bindPercentileRaw(in *arrow.Schema, mem memory.Allocator, call AggregateCall, evs []Evaluator, types []arrow.DataType) (*boundAgg, error) {
	c, ok := evs[1].(ConstantEvaluator)
	if !ok {
		return nil, aggBindError(call, in, fmt.Errorf("the percentage of %s must be a constant, not %s: %w", call.Func, call.Args[1], ErrType))
	}
	p, err := percentileParamsOf(call, c.Value())
	if err != nil {
		return nil, aggBindError(call, in, err)
	}
	info := aggInfo{label: call.String()}
	for _, a := range call.Args {
		info.args = append(info.args, a.String())
	}
	t := types[0]
	if t.ID() == arrow.NULL {
		t = Float64
	}
	hasFreq := len(evs) == 3
	if hasFreq && !IsIntegral(types[2]) && types[2].ID() != arrow.NULL {
		return nil, aggBindError(call, in, fmt.Errorf("the frequency of %s must be integral, not %s: %w", call.Func, TypeName(types[2]), ErrType))
	}
	acc, err := bindPercentile(info, p, t, hasFreq, false)
	if err != nil {
		return nil, aggBindError(call, in, err)
	}
	args := []Evaluator{Plain(evs[0], mem)}
	if hasFreq {
		args = append(args, Plain(evs[2], mem))
	}
	return &boundAgg{args: args, acc: acc, result: arrow.Field{Type: p.resultType(), Nullable: true}}, nil
}

// bindPercentileState binds an exact percentile over its partial state
// (values, frequencies); the percentages are call's literal.
func bindPercentileState(call AggregateCall, types []arrow.DataType) (accumulator, arrow.DataType, error) {
	l, ok := call.Args[1].(*Literal)
	if !ok {
		return nil, nil, fmt.Errorf("the percentage of %s must be a literal, not %s: %w", call.Func, call.Args[1], ErrType)
	}
	p, err := percentileParamsOf(call, l.Value)
	if err != nil {
		return nil, nil, err
	}
	vl, ok1 := types[0].(*arrow.ListType)
	fl, ok2 := types[1].(*arrow.ListType)
	if len(types) != 2 || !ok1 || !ok2 || fl.Elem().ID() != arrow.INT64 {
		return nil, nil, fmt.Errorf("partial state of %s must be (array, array<bigint>), not %s: %w", call.Func, typeList(types), ErrType)
	}
	acc, err := bindPercentile(aggInfo{label: call.String()}, p, vl.Elem(), false, true)
	if err != nil {
		return nil, nil, err
	}
	return acc, p.resultType(), nil
}

// reset drops the slots of groups gids (their values stay in the buffers
// until the accumulator is dropped), as collect_list's reset does.
func (a *percentileAcc) reset(gids []int32) {
	drop := make(map[int32]bool, len(gids))
	for _, g := range gids {
		drop[g] = true
	}
	for s, g := range a.owners {
		if drop[g] {
			a.owners[s] = -1
		}
	}
}
