package vector

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// InList is (x IN (v1, v2, ...)) with SQL null semantics: true when x
// equals an item; otherwise null when x or any item is null; else false.
// Items compare as = does (widening to a common type, NaN equal to NaN).
//
// A list of constants is converted and hashed once at bind time (small
// integer lists are scanned instead of hashed); a dictionary-encoded
// string is tested once per dictionary entry. A list with non-constant
// items binds as x = v1 OR x = v2 OR ..., which has the same semantics.
type InList struct {
	Value Expr
	List  []Expr
}

// In returns (x IN (list...)).
func In(x Expr, list ...Expr) Expr { return &InList{Value: x, List: list} }

// NotIn returns (NOT (x IN (list...))): null stays null, so x NOT IN
// (1, NULL) is never true.
func NotIn(x Expr, list ...Expr) Expr { return Not(In(x, list...)) }

// String renders (x IN (v1, v2, ...)).
func (e *InList) String() string {
	parts := make([]string, len(e.List))
	for i, v := range e.List {
		parts[i] = v.String()
	}
	return "(" + e.Value.String() + " IN (" + strings.Join(parts, ", ") + "))"
}

// Bind implements Expr.
func (e *InList) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	x, err := e.Value.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	items := make([]Evaluator, len(e.List))
	allConst := true
	for i, item := range e.List {
		if items[i], err = item.Bind(in, mem); err != nil {
			return nil, err
		}
		_, c := constValue(items[i])
		allConst = allConst && c
	}
	if len(items) == 0 {
		return newConst(Boolean, false, mem), nil
	}
	// The common type of x and every non-null item.
	common := Unwrap(x.DataType())
	for _, it := range items {
		t := Unwrap(it.DataType())
		if t.ID() == arrow.NULL {
			continue
		}
		if common.ID() == arrow.NULL {
			common = t
			continue
		}
		c, err := compareType(CompareEq, common, t)
		if err != nil {
			return nil, newBindError(e, in, fmt.Errorf("cannot apply IN to %s and %s: %w", TypeName(common), TypeName(t), ErrType))
		}
		common = c
	}
	if isNullType(x) {
		return newConst(Boolean, nil, mem), nil
	}
	// Structs, arrays and maps have no constant set: they compare item by
	// item with = (field by field, as Spark's In over structs does).
	if !allConst || isNestedID(common.ID()) {
		return e.bindOr(x, items, mem, in)
	}
	ev, err := newInEval(textOf(e), x, items, common, mem)
	if err != nil {
		return nil, newBindError(e, in, err)
	}
	return foldIfConstant(ev, mem, x), nil
}

// bindOr binds x = v1 OR x = v2 OR ... for lists with non-constant items.
func (e *InList) bindOr(x Evaluator, items []Evaluator, mem memory.Allocator, in *arrow.Schema) (Evaluator, error) {
	var acc Evaluator
	for i, it := range items {
		eq, err := bindCompare(CompareEq, x, it, mem, textOf(e), operandName(e.Value, x), operandName(e.List[i], it))
		if err != nil {
			return nil, newBindError(e, in, err)
		}
		if acc == nil {
			acc = eq
		} else {
			acc = bindLogical(LogicOr, acc, eq, mem)
		}
	}
	return acc, nil
}

// inMember sets bit i of out when row i of arr is in the set (values
// under nulls may set bits; the evaluator masks them).
type inMember interface {
	member(arr arrow.Array, n int, out []uint64)
}

// inEval tests x against a constant set.
type inEval struct {
	x       Evaluator
	set     inMember
	hasNull bool // a NULL item: non-members are null, not false
	mem     memory.Allocator
}

func newInEval(expr sqlText, x Evaluator, items []Evaluator, common arrow.DataType, mem memory.Allocator) (Evaluator, error) {
	e := &inEval{mem: mem}
	var vals []any
	for _, it := range items {
		v, _ := constValue(it)
		if v == nil {
			e.hasNull = true
			continue
		}
		w, err := widenValue(v, Unwrap(it.DataType()), common)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", FormatValue(v, it.DataType()), err)
		}
		vals = append(vals, w)
	}
	if isDictString(x.DataType()) && common.ID() == arrow.STRING {
		e.x = x
		e.set = &dictSet{set: stringSet(vals)}
		return e, nil
	}
	var err error
	if e.x, err = numericWiden(x, common, mem, expr, sqlText{}); err != nil {
		return nil, err
	}
	switch common.ID() {
	case arrow.INT32, arrow.DATE32:
		e.set = newIntSet[int32](vals)
	case arrow.INT64, arrow.TIMESTAMP:
		e.set = newIntSet[int64](vals)
	case arrow.FLOAT64:
		s := &floatSet{set: map[uint64]struct{}{}}
		for _, v := range vals {
			s.set[inFloatKey(v.(float64))] = struct{}{}
		}
		e.set = s
	case arrow.DECIMAL128:
		s := &decimalSet{set: map[decimal128.Num]struct{}{}}
		for _, v := range vals {
			s.set[v.(decimal128.Num)] = struct{}{}
		}
		e.set = s
	case arrow.STRING, arrow.BINARY:
		e.set = &bytesSet{set: stringSet(vals)}
	case arrow.BOOL:
		s := &boolSet{}
		for _, v := range vals {
			if v.(bool) {
				s.t = true
			} else {
				s.f = true
			}
		}
		e.set = s
	default:
		return nil, fmt.Errorf("IN over %s values is not supported: %w", TypeName(common), ErrType)
	}
	return e, nil
}

func (e *inEval) DataType() arrow.DataType { return Boolean }

func (e *inEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	xa, err := e.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	set := e.set
	if d, ok := set.(*dictSet); ok && xa.(*array.Dictionary).Dictionary().NullN() > 0 {
		plain, err := DecodeDictionary(e.mem, xa)
		xa.Release()
		if err != nil {
			return nil, err
		}
		xa, set = plain, &bytesSet{set: d.set}
	}
	defer xa.Release()
	n := xa.Len()
	vbuf, words := newBitmap(e.mem, n)
	set.member(xa, n, words)
	if !e.hasNull {
		validity, nulls := copyValidity(e.mem, xa)
		return boolArrayOwning(n, vbuf, validity, nulls), nil
	}
	// Members are true; the others are null (an item was null).
	mbuf, valid := newBitmap(e.mem, n)
	xv := validityWords(xa)
	for w := range valid {
		valid[w] = xv.word(w) & words[w]
	}
	validity, nulls := finishValidity(mbuf, valid, n)
	return boolArrayOwning(n, vbuf, validity, nulls), nil
}

// smallSet is the largest integer list scanned rather than hashed.
const smallSet = 8

type intSet[T int32 | int64] struct {
	list []T
	set  map[T]struct{}
}

func newIntSet[T int32 | int64](vals []any) *intSet[T] {
	s := &intSet[T]{}
	for _, v := range vals {
		i, _ := toInt64(v)
		s.list = append(s.list, T(i))
	}
	if len(s.list) > smallSet {
		s.set = make(map[T]struct{}, len(s.list))
		for _, v := range s.list {
			s.set[v] = struct{}{}
		}
	}
	return s
}

func (s *intSet[T]) member(arr arrow.Array, _ int, out []uint64) {
	vals := fixedSlice[T](arr)
	for w := range out {
		var word uint64
		for j, v := range vals[w*64 : min(len(vals), w*64+64)] {
			var hit uint64
			if s.set == nil {
				for _, c := range s.list {
					hit |= b2u(v == c)
				}
			} else {
				_, ok := s.set[v]
				hit = b2u(ok)
			}
			word |= hit << uint(j)
		}
		out[w] = word
	}
}

// inFloatKey maps a double to a key under which Spark's equal values meet:
// every NaN to one NaN, -0.0 to 0.0.
func inFloatKey(v float64) uint64 {
	switch {
	case v != v:
		return math.Float64bits(math.NaN())
	case v == 0:
		return 0
	}
	return math.Float64bits(v)
}

type floatSet struct{ set map[uint64]struct{} }

func (s *floatSet) member(arr arrow.Array, _ int, out []uint64) {
	vals := fixedSlice[float64](arr)
	for w := range out {
		var word uint64
		for j, v := range vals[w*64 : min(len(vals), w*64+64)] {
			_, ok := s.set[inFloatKey(v)]
			word |= b2u(ok) << uint(j)
		}
		out[w] = word
	}
}

type decimalSet struct{ set map[decimal128.Num]struct{} }

func (s *decimalSet) member(arr arrow.Array, _ int, out []uint64) {
	vals := fixedSlice[decimal128.Num](arr)
	for w := range out {
		var word uint64
		for j, v := range vals[w*64 : min(len(vals), w*64+64)] {
			_, ok := s.set[v]
			word |= b2u(ok) << uint(j)
		}
		out[w] = word
	}
}

// stringSet hashes string or binary items.
func stringSet(vals []any) map[string]struct{} {
	set := make(map[string]struct{}, len(vals))
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			set[x] = struct{}{}
		case []byte:
			set[string(x)] = struct{}{}
		}
	}
	return set
}

type bytesSet struct{ set map[string]struct{} }

func (s *bytesSet) member(arr arrow.Array, n int, out []uint64) {
	offs, data := binaryValues(arr)
	for w := range out {
		var word uint64
		for j := range min(64, n-w*64) {
			i := w*64 + j
			_, ok := s.set[string(data[offs[i]:offs[i+1]])]
			word |= b2u(ok) << uint(j)
		}
		out[w] = word
	}
}

type boolSet struct{ t, f bool }

func (s *boolSet) member(arr arrow.Array, _ int, out []uint64) {
	x := boolValueWords(arr)
	t, f := constWords(s.t).fill, constWords(s.f).fill
	for w := range out {
		v := x.word(w)
		out[w] = v&t | ^v&f
	}
}

// dictSet tests each dictionary entry once, then maps the indices.
type dictSet struct {
	set   map[string]struct{}
	table []uint8
}

func (s *dictSet) member(arr arrow.Array, _ int, out []uint64) {
	d := arr.(*array.Dictionary)
	dict := d.Dictionary()
	offs, data := binaryValues(dict)
	m := dict.Len()
	s.table = dictTable(s.table, m, d.Indices())
	for e := 0; e < m; e++ {
		_, ok := s.set[string(data[offs[e]:offs[e+1]])]
		s.table[e] = uint8(b2u(ok))
	}
	dictLookup(d.Indices(), s.table, out)
}

// BetweenExpr is (x BETWEEN lo AND hi), that is x >= lo AND x <= hi with
// three-valued AND, evaluating x once.
type BetweenExpr struct {
	Value, Low, High Expr
}

// Between returns (x BETWEEN lo AND hi).
func Between(x, lo, hi Expr) Expr { return &BetweenExpr{Value: x, Low: lo, High: hi} }

// String renders (x BETWEEN lo AND hi).
func (b *BetweenExpr) String() string {
	return "(" + b.Value.String() + " BETWEEN " + b.Low.String() + " AND " + b.High.String() + ")"
}

// Bind implements Expr.
func (b *BetweenExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	x, err := b.Value.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	lo, err := b.Low.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	hi, err := b.High.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	expr, xName := textOf(b), operandName(b.Value, x)
	shared := &sharedEval{Evaluator: x}
	xs := Evaluator(shared)
	if _, ok := constValue(x); ok {
		xs = x
	}
	ge, err := bindCompare(CompareGe, xs, lo, mem, expr, xName, operandName(b.Low, lo))
	if err != nil {
		return nil, newBindError(b, in, err)
	}
	le, err := bindCompare(CompareLe, xs, hi, mem, expr, xName, operandName(b.High, hi))
	if err != nil {
		return nil, newBindError(b, in, err)
	}
	// x >= lo AND x <= hi, lazily as Spark's AND: the upper bound is only
	// compared for the rows the lower one does not decide, so that its
	// errors (an overflowing conversion of x, say) only count there.
	and := bindLogical(LogicAnd, ge, le, mem)
	if _, ok := and.(*logicEval); !ok || xs == x {
		return and, nil
	}
	return &betweenEval{x: x, shared: shared, and: and}, nil
}

// sharedEval hands out the array its owner evaluated for the current
// batch, so that x of BETWEEN is evaluated once for both comparisons. Asked
// for another batch (the rows a lazy AND still needs), it evaluates x
// again.
type sharedEval struct {
	Evaluator
	cur arrow.Array
	rec arrow.Record // the batch cur was evaluated for
}

func (s *sharedEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	if s.cur == nil || rec != s.rec {
		return s.Evaluator.Eval(ctx, rec)
	}
	s.cur.Retain()
	return s.cur, nil
}

type betweenEval struct {
	x      Evaluator
	shared *sharedEval
	and    Evaluator // ge AND le, over shared
}

func (e *betweenEval) DataType() arrow.DataType { return Boolean }

func (e *betweenEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	xa, err := e.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	e.shared.cur, e.shared.rec = xa, rec
	defer func() {
		e.shared.cur, e.shared.rec = nil, nil
		xa.Release()
	}()
	return e.and.Eval(ctx, rec)
}
