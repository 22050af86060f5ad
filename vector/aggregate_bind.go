package vector

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Binding of aggregate calls: argument checks, result and state types, and
// the choice of accumulator.

// aggBindError is a bind error naming the aggregate call.
func aggBindError(call AggregateCall, in *arrow.Schema, err error) *BindError {
	var names []string
	if in != nil {
		for _, f := range in.Fields() {
			names = append(names, f.Name)
		}
	}
	return &BindError{Expr: call.String(), Available: names, Err: err}
}

// stateParts lists the partial state columns of a function (see
// PartialSchema).
func stateParts(f AggFunc) []string {
	switch f {
	case AggCountStar, AggCount:
		return []string{statePartCount}
	case AggSum, AggAvg:
		return []string{statePartSum, statePartCount}
	case AggMin, AggMax:
		return []string{statePartValue}
	case AggFirst, AggLast:
		return []string{statePartValue, statePartSet}
	case AggApproxCountDistinct:
		return []string{statePartHLL}
	}
	return extStateParts(f)
}

func bindAggregate(in *arrow.Schema, mem memory.Allocator, call AggregateCall, mode AggMode) (*boundAgg, error) {
	if !call.Func.valid() {
		return nil, aggBindError(call, in, fmt.Errorf("unknown aggregate function %d", int(call.Func)))
	}
	for _, a := range call.Args {
		if a == nil {
			return nil, aggBindError(call, in, fmt.Errorf("nil argument"))
		}
	}
	if err := checkArity(call); err != nil {
		return nil, aggBindError(call, in, err)
	}
	distinct := call.Distinct && (call.Func == AggCount || call.Func == AggSum || call.Func == AggAvg || extDistinct(call.Func))
	if distinct && mode != AggComplete {
		return nil, aggBindError(call, in, fmt.Errorf("DISTINCT aggregates are supported only in complete aggregation, not on partial state (use approx_count_distinct)"))
	}
	name := call.outputName()
	if mode.consumesState() {
		return bindStateAggregate(in, mem, call, name)
	}
	evs := make([]Evaluator, len(call.Args))
	types := make([]arrow.DataType, len(call.Args))
	for i, a := range call.Args {
		ev, err := a.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		evs[i], types[i] = ev, Unwrap(ev.DataType())
	}
	b, err := newRawAggregate(in, mem, call, evs, types)
	if err != nil {
		return nil, err
	}
	b.result.Name = name
	if st, ok := b.acc.(*statAcc); ok && mode == AggComplete {
		st.split = true // Spark's two input slices (see splitFold)
	}
	for _, part := range stateParts(call.Func) {
		b.state = append(b.state, arrow.Field{Name: StateColumnName(name, part), Nullable: part == statePartValue || part == statePartOrdering})
	}
	setStateTypes(call.Func, b)
	if distinct {
		if _, ok := b.acc.(*statAcc); ok || isPercentile(call.Func) || call.Func == AggApproxPercentile {
			types = statArgTypes(b.args) // the arguments as doubles; a percentile's without its percentage
		}
		enc, err := NewKeyEncoder(mem, types)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		b.acc = &distinctAcc{inner: b.acc, enc: enc, set: newBytesTable()}
	}
	return b, nil
}

func checkArity(call AggregateCall) error {
	n := len(call.Args)
	if ext, err := extArity(call); ext {
		return err
	}
	switch call.Func {
	case AggCountStar:
		if n != 0 {
			return fmt.Errorf("count(*) takes no arguments, got %d", n)
		}
	case AggCount:
		if n == 0 {
			return fmt.Errorf("count takes at least 1 argument, got 0 (use AggCountStar for count(*))")
		}
	case AggApproxCountDistinct:
		if n != 1 && n != 2 {
			return fmt.Errorf("approx_count_distinct takes 1 or 2 arguments, got %d", n)
		}
	default:
		if n != 1 {
			return fmt.Errorf("%s takes 1 argument, got %d", call.Func, n)
		}
	}
	return nil
}

// setStateTypes fills in the types of b.state from the result type.
func setStateTypes(f AggFunc, b *boundAgg) {
	switch f {
	case AggCountStar, AggCount:
		b.state[0].Type = Int64
	case AggSum:
		b.state[0].Type, b.state[1].Type = b.result.Type, Int64
	case AggAvg:
		b.state[0].Type, b.state[1].Type = Float64, Int64
		if acc, ok := b.acc.(*exactSumAcc); ok {
			b.state[0].Type = acc.sumType // an interval sum
		}
		if acc, ok := b.acc.(*sumAcc); ok && acc.kind == sumDecimal {
			b.state[0].Type = acc.resType // the decimal sum
		}
	case AggMin, AggMax:
		b.state[0].Type = b.result.Type
	case AggFirst, AggLast:
		b.state[0].Type, b.state[1].Type = b.result.Type, Boolean
	case AggApproxCountDistinct:
		b.state[0].Type = Binary
	default:
		if t, ok := b.acc.(stateTyper); ok {
			for i, dt := range t.stateTypes() {
				b.state[i].Type = dt
			}
		}
	}
}

// newRawAggregate picks the accumulator for input rows.
func newRawAggregate(in *arrow.Schema, mem memory.Allocator, call AggregateCall, evs []Evaluator, types []arrow.DataType) (*boundAgg, error) {
	info := aggInfo{label: call.String()}
	for _, a := range call.Args {
		info.args = append(info.args, a.String())
	}
	typeErr := func(what string) error {
		return aggBindError(call, in, fmt.Errorf("function %s requires %s, not %s: %w", call.Func, what, TypeName(types[0]), ErrType))
	}
	b := &boundAgg{args: evs}
	switch call.Func {
	case AggCountStar, AggCount:
		b.acc = &countAcc{}
		b.result = arrow.Field{Type: Int64}
		// count(1): non-null constants count every row, like count(*),
		// without expanding the constant into a column per batch. Not
		// count(DISTINCT 1, 2), which counts one tuple where there are rows.
		allConst := !call.Distinct
		for _, ev := range evs {
			c, ok := ev.(ConstantEvaluator)
			allConst = allConst && ok && c.Value() != nil
		}
		if allConst {
			b.args = nil
		}
	case AggSum, AggAvg:
		if isIntervalType(types[0]) {
			acc, err := newExactSum(info, types[0], call.Func == AggAvg, false, false)
			if err != nil {
				return nil, aggBindError(call, in, err)
			}
			b.acc, b.result, b.args = acc, arrow.Field{Type: acc.resultType(), Nullable: true}, []Evaluator{Plain(evs[0], mem)}
			break
		}
		res, kind, ok := sumResultType(types[0])
		if !ok {
			return nil, typeErr("a numeric argument")
		}
		acc := &sumAcc{aggInfo: info, kind: kind, resType: res}
		if call.Func == AggAvg {
			acc.avg, acc.kind, acc.resType = true, sumFloat, Float64
			if d, ok := types[0].(*arrow.Decimal128Type); ok {
				sum, result := avgDecimalTypes(d)
				acc.kind, acc.resType, acc.avgType = sumDecimal, sum, result
			}
		}
		if d, ok := acc.resType.(*arrow.Decimal128Type); ok {
			acc.prec = d.Precision
		}
		b.acc = acc
		b.result = arrow.Field{Type: acc.resultType(), Nullable: true}
		b.args = []Evaluator{Plain(evs[0], mem)}
	case AggMin, AggMax:
		if acc, ok := newNestedMinMax(types[0], call.Func == AggMax, mem); ok {
			b.acc, b.args = acc, []Evaluator{Plain(evs[0], mem)}
			b.result = arrow.Field{Type: types[0], Nullable: true}
			break
		}
		kind, wide, ok := minMaxStorage(types[0])
		if !ok {
			return nil, typeErr("a number, string, binary, boolean, date, timestamp, decimal or an orderable struct or array")
		}
		acc := &minMaxAcc{isMax: call.Func == AggMax, dt: types[0], kind: kind}
		b.args = []Evaluator{Plain(evs[0], mem)}
		if wide != nil {
			w, err := numericWiden(b.args[0], wide, mem, sqlText{}, sqlText{})
			if err != nil {
				return nil, aggBindError(call, in, err)
			}
			acc.dt, acc.narrow, b.args[0] = wide, types[0], w
		}
		b.acc = acc
		b.result = arrow.Field{Type: types[0], Nullable: true}
	case AggFirst, AggLast:
		vals, ok := newGroupValues(types[0])
		if !ok {
			return nil, typeErr("a number, string, binary, boolean, date, timestamp or decimal")
		}
		b.acc = &firstLastAcc{last: call.Func == AggLast, ignoreNulls: call.IgnoreNulls, vals: vals}
		b.result = arrow.Field{Type: types[0], Nullable: true}
		b.args = []Evaluator{Plain(evs[0], mem)}
	case AggApproxCountDistinct:
		rsd := DefaultHLLRelativeSD
		if len(evs) == 2 {
			c, ok := evs[1].(ConstantEvaluator)
			v, isFloat := any(nil), false
			if ok {
				v = c.Value()
				_, isFloat = v.(float64)
			}
			if !isFloat {
				return nil, aggBindError(call, in, fmt.Errorf("the relative SD of approx_count_distinct must be a constant double, not %s: %w", call.Args[1], ErrType))
			}
			rsd = v.(float64)
		}
		p, err := HLLPrecision(rsd)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		enc, err := NewKeyEncoder(mem, types[:1])
		if err != nil {
			return nil, typeErr("a groupable argument")
		}
		b.acc = &hllAcc{aggInfo: info, p: uint(p), m: 1 << p, enc: enc}
		b.result = arrow.Field{Type: Int64}
		b.args = evs[:1]
	default:
		return newExtRawAggregate(in, mem, call, evs, types)
	}
	return b, nil
}

// bindStateAggregate binds an aggregate over partial state columns.
func bindStateAggregate(in *arrow.Schema, mem memory.Allocator, call AggregateCall, name string) (*boundAgg, error) {
	parts := stateParts(call.Func)
	b := &boundAgg{}
	var types []arrow.DataType
	for _, part := range parts {
		col := StateColumnName(name, part)
		idx, err := resolveField(in.Fields(), col)
		if err != nil {
			return nil, aggBindError(call, in, fmt.Errorf("partial state column %s: %w", QuoteIdent(col), err))
		}
		f := in.Field(idx)
		b.args = append(b.args, &columnEval{col: idx, dt: f.Type, mem: mem})
		b.state = append(b.state, arrow.Field{Name: StateColumnName(name, part), Type: f.Type, Nullable: part == statePartValue || part == statePartOrdering})
		types = append(types, f.Type)
	}
	stateErr := func(want string) error {
		return aggBindError(call, in, fmt.Errorf("partial state of %s must be %s, not %s: %w", call.Func, want, typeList(types), ErrType))
	}
	info := aggInfo{label: call.String(), args: []string{StateColumnName(name, parts[0])}}
	switch call.Func {
	case AggCountStar, AggCount:
		if types[0].ID() != arrow.INT64 {
			return nil, stateErr("(bigint)")
		}
		b.acc = &countAcc{merge: true}
		b.result = arrow.Field{Name: name, Type: Int64}
	case AggSum, AggAvg:
		if isIntervalType(types[0]) {
			acc, err := newExactSum(info, types[0], call.Func == AggAvg, false, true)
			if err != nil {
				return nil, aggBindError(call, in, err)
			}
			b.acc, b.result = acc, arrow.Field{Name: name, Type: acc.resultType(), Nullable: true}
			break
		}
		// The state's sum has the result type already.
		res := types[0]
		kind, ok := sumKindOfState(res)
		if !ok || types[1].ID() != arrow.INT64 || call.Func == AggAvg && kind != sumFloat && kind != sumDecimal {
			return nil, stateErr("(bigint|double|decimal, bigint)")
		}
		acc := &sumAcc{aggInfo: info, kind: kind, resType: res, merge: true, avg: call.Func == AggAvg}
		if d, ok := res.(*arrow.Decimal128Type); ok {
			acc.prec = d.Precision
			if acc.avg {
				r, err := avgDecimalResultOfState(d)
				if err != nil {
					return nil, aggBindError(call, in, err)
				}
				acc.avgType = r
			}
		}
		b.acc = acc
		b.result = arrow.Field{Name: name, Type: acc.resultType(), Nullable: true}
	case AggMin, AggMax:
		if acc, ok := newNestedMinMax(types[0], call.Func == AggMax, mem); ok {
			b.acc = acc
			b.result = arrow.Field{Name: name, Type: types[0], Nullable: true}
			break
		}
		kind, wide, ok := minMaxStorage(types[0])
		if !ok {
			return nil, stateErr("(a value)")
		}
		acc := &minMaxAcc{isMax: call.Func == AggMax, dt: types[0], kind: kind}
		if wide != nil {
			w, err := numericWiden(b.args[0], wide, mem, sqlText{}, sqlText{})
			if err != nil {
				return nil, aggBindError(call, in, err)
			}
			acc.dt, acc.narrow, b.args[0] = wide, types[0], w
		}
		b.acc = acc
		b.result = arrow.Field{Name: name, Type: types[0], Nullable: true}
	case AggFirst, AggLast:
		vals, ok := newGroupValues(types[0])
		if !ok || types[1].ID() != arrow.BOOL {
			return nil, stateErr("(a value, boolean)")
		}
		b.acc = &firstLastAcc{last: call.Func == AggLast, merge: true, vals: vals}
		b.result = arrow.Field{Name: name, Type: types[0], Nullable: true}
	case AggApproxCountDistinct:
		if types[0].ID() != arrow.BINARY {
			return nil, stateErr("(binary)")
		}
		rsd := DefaultHLLRelativeSD
		if len(call.Args) == 2 {
			if l, ok := call.Args[1].(*Literal); ok {
				if v, ok := l.Value.(float64); ok {
					rsd = v
				}
			}
		}
		p, err := HLLPrecision(rsd)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		b.acc = &hllAcc{aggInfo: info, p: uint(p), m: 1 << p, merge: true}
		b.result = arrow.Field{Name: name, Type: Int64}
	default:
		acc, res, err := bindExtStateAggregate(call, types)
		if err != nil {
			return nil, aggBindError(call, in, err)
		}
		b.acc = acc
		b.result = arrow.Field{Name: name, Type: res, Nullable: true}
	}
	return b, nil
}

func typeList(types []arrow.DataType) string {
	s := "("
	for i, t := range types {
		if i > 0 {
			s += ", "
		}
		s += TypeName(t)
	}
	return s + ")"
}

// distinctAcc feeds an accumulator only the first occurrence of each
// (group, argument values) pair, which a set keyed by the group id and the
// arguments' normalized key remembers. Rows with a null argument are
// skipped (count, sum and avg ignore them anyway). The inner accumulator's
// row counts are then the numbers of distinct values fed.
type distinctAcc struct {
	inner accumulator
	enc   *KeyEncoder
	set   *bytesTable
	fed   []int64
	key   []byte
	sel   []int32
	gsel  []int32
}

func (d *distinctAcc) resize(n int) { d.grow(nil, n) }

func (d *distinctAcc) grow(g *grower, n int) {
	if ga, ok := d.inner.(growerAcc); ok && g != nil {
		ga.grow(g, n)
	} else {
		d.inner.resize(n)
	}
	d.fed = growZeroWith(g, d.fed, n)
	if g != nil {
		// The value set grows interruptibly during the batch that follows.
		d.set.growCtx, d.set.growErr = g.ctx, nil
	}
}

func (d *distinctAcc) update(gids []int32, args []arrow.Array) error {
	if err := d.enc.Encode(args); err != nil {
		return err
	}
	hashes := d.enc.Hashes()
	sel, gsel := d.sel[:0], d.gsel[:0]
	for i, g := range gids {
		if d.enc.HasNull(i) {
			continue
		}
		key := binary.LittleEndian.AppendUint32(d.key[:0], uint32(g))
		if d.enc.IsFixed() {
			key = binary.LittleEndian.AppendUint64(key, d.enc.Fixed()[i])
		} else {
			key = append(key, d.enc.Key(i)...)
		}
		d.key = key
		if _, added := d.set.insertKey(fmix64(hashes[i]^uint64(g)*0x9e3779b97f4a7c15), key); added {
			sel = append(sel, int32(i))
			gsel = append(gsel, g)
			d.fed[g]++
		}
	}
	d.sel, d.gsel = sel, gsel
	if err := d.set.growErr; err != nil {
		return err
	}
	if len(sel) == 0 {
		return nil
	}
	taken := make([]arrow.Array, len(args))
	for i, a := range args {
		t, err := Take(d.enc.mem, a, sel)
		if err != nil {
			releaseArrays(taken[:i])
			return err
		}
		taken[i] = t
	}
	defer releaseArrays(taken)
	return d.inner.update(gsel, taken)
}

func (d *distinctAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return d.inner.final(mem, lo, hi, d.fed)
}

func (d *distinctAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return d.inner.state(mem, lo, hi, d.fed)
}

// sumKindOfState is how a partial state's sum column (already of the result
// type) accumulates.
func sumKindOfState(t arrow.DataType) (sumKind, bool) {
	switch t.ID() {
	case arrow.INT64:
		return sumInt, true
	case arrow.FLOAT64:
		return sumFloat, true
	case arrow.DECIMAL128:
		return sumDecimal, true
	}
	return 0, false
}
