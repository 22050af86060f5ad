package vector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// AggFunc is an aggregate function.
type AggFunc int

// The aggregate functions, with Spark's semantics (ANSI mode).
const (
	// AggCountStar counts rows: count(*). It takes no arguments.
	AggCountStar AggFunc = iota
	// AggCount counts the rows where every argument is non-null: count(x, ...).
	AggCount
	// AggSum adds the non-null values: int/bigint → bigint (overflow is an
	// error), double → double, decimal(p,s) → decimal(min(38,p+10),s).
	// NULL when there is no non-null value.
	AggSum
	// AggMin is the smallest non-null value (numbers, strings, binary,
	// booleans, dates, timestamps, decimals); NaN is larger than any double.
	AggMin
	// AggMax is the largest non-null value.
	AggMax
	// AggAvg is the mean of the non-null values, as a double. Decimals are
	// averaged through double too (Spark returns decimal(p+4,s+4); this is a
	// documented difference).
	AggAvg
	// AggFirst is the first value in input order (the first non-null one with
	// IgnoreNulls).
	AggFirst
	// AggLast is the last value in input order (the last non-null one with
	// IgnoreNulls).
	AggLast
	// AggApproxCountDistinct estimates the number of distinct non-null
	// values with a HyperLogLog sketch: approx_count_distinct(x[, rsd]),
	// where the optional constant rsd is the relative standard deviation
	// (default 0.05, as Spark).
	AggApproxCountDistinct
)

var aggFuncNames = [...]string{"count", "count", "sum", "min", "max", "avg", "first", "last", "approx_count_distinct"}

func (f AggFunc) String() string {
	if n, ok := extAggNames[f]; ok {
		return n
	}
	if f < 0 || int(f) >= len(aggFuncNames) {
		return fmt.Sprintf("AggFunc(%d)", int(f))
	}
	return aggFuncNames[f]
}

// AggregateCall is one aggregate of a hash aggregation.
type AggregateCall struct {
	Func AggFunc
	Args []Expr
	// Distinct aggregates distinct argument values only. It is supported for
	// count, sum and avg in AggComplete mode (a per-group set of the values
	// seen); min, max, first, last and approx_count_distinct give the same
	// result either way and ignore it. Partial modes reject it, as Spark's
	// streaming aggregation does.
	Distinct bool
	// IgnoreNulls makes first and last skip null values.
	IgnoreNulls bool
	// Name is the output column name (and the prefix of the partial state
	// columns); empty means String().
	Name string
}

// String renders the call in SQL, as errors name it.
func (c AggregateCall) String() string {
	if c.Func == AggCountStar {
		return "count(*)"
	}
	var b strings.Builder
	b.WriteString(c.Func.String())
	b.WriteByte('(')
	if c.Distinct {
		b.WriteString("DISTINCT ")
	}
	for i, a := range c.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if a == nil {
			b.WriteString("<nil>")
		} else {
			b.WriteString(a.String())
		}
	}
	b.WriteByte(')')
	if c.IgnoreNulls && (c.Func == AggFirst || c.Func == AggLast) {
		b.WriteString(" IGNORE NULLS")
	}
	return b.String()
}

func (c AggregateCall) outputName() string {
	if c.Name != "" {
		return c.Name
	}
	return c.String()
}

// AggMode says what a hash aggregation consumes and produces.
type AggMode int

const (
	// AggComplete turns input rows into final values.
	AggComplete AggMode = iota
	// AggPartial turns input rows into partial state columns.
	AggPartial
	// AggFinal turns partial state into final values.
	AggFinal
	// AggMerge turns partial state into merged partial state.
	AggMerge
)

// consumesState reports whether the mode's input is partial state.
func (m AggMode) consumesState() bool { return m == AggFinal || m == AggMerge }

// producesState reports whether the mode's output is partial state.
func (m AggMode) producesState() bool { return m == AggPartial || m == AggMerge }

// AggregateSpec describes a hash aggregation.
//
// In AggComplete and AggPartial the GroupBy expressions and the aggregate
// arguments are evaluated over the input rows. In AggFinal and AggMerge the
// input is partial state (see PartialSchema): GroupBy names its key columns
// and each aggregate finds its state columns by its output name; Args are
// then not evaluated (pass the same calls as for AggPartial).
type AggregateSpec struct {
	GroupBy    []NamedExpr
	Aggregates []AggregateCall
	Mode       AggMode
}

// The partial state layout, a stable contract with the streaming state
// store: the key columns (named by GroupBy, dictionaries decoded), then for
// each aggregate, in order, its state columns named "<name>.<part>" where
// <name> is the aggregate's output name:
//
//	count(*), count(x)        .count bigint (not null)
//	sum(x)                    .sum <result type> (0 when empty), .count bigint (non-null inputs)
//	avg(x)                    .sum double, .count bigint
//	min(x), max(x)            .value <input type> (NULL when empty)
//	first(x), last(x)         .value <input type>, .set boolean (whether a value was taken)
//	approx_count_distinct(x)  .hll binary (HyperLogLog registers, one byte each; see hll.go)
const (
	statePartCount = "count"
	statePartSum   = "sum"
	statePartValue = "value"
	statePartSet   = "set"
	statePartHLL   = "hll"
)

// StateColumnName is the name of part of an aggregate's partial state.
func StateColumnName(aggName, part string) string { return aggName + "." + part }

// PartialSchema returns the schema that spec, run in AggPartial mode over
// input rows of schema in, produces (and that AggMerge and AggFinal consume).
func PartialSchema(in *arrow.Schema, spec AggregateSpec) (*arrow.Schema, error) {
	spec.Mode = AggPartial
	b, err := bindAggregation(in, memory.DefaultAllocator, spec)
	if err != nil {
		return nil, err
	}
	return b.schema, nil
}

// maxAggOutputRows bounds the output batches.
const maxAggOutputRows = 64 << 10

// HashAggregate groups its input by key and computes aggregates per group.
// It is blocking: the first Next consumes the whole input. A global
// aggregation (no GroupBy) outputs exactly one row, even for empty input; a
// grouped one outputs one row per group (none for empty input), in order of
// the groups' first appearance. Null keys form their own group. The output
// is the key columns then one column per aggregate (AggComplete, AggFinal)
// or the partial state columns (AggPartial, AggMerge), in batches of at
// most 64K rows.
type HashAggregate struct {
	mem   memory.Allocator
	input Operator
	bound *boundAggregation

	gids     []int32
	consumed bool
	rows     []int64 // rows per group, after consumption
	next     int     // next group to output
	err      error   // sticky, including io.EOF
	closed   bool
	heap     heapAccount // the tables' and accumulators' Go heap
}

// NewHashAggregate returns a hash aggregation of input. On success it owns
// input.
func NewHashAggregate(mem memory.Allocator, input Operator, spec AggregateSpec) (*HashAggregate, error) {
	b, err := bindAggregation(input.Schema(), mem, spec)
	if err != nil {
		return nil, err
	}
	h := &HashAggregate{mem: mem, input: input, bound: b, heap: newHeapAccount(mem, "hash aggregation")}
	if r, ok := b.grouper.(growReserver); ok && h.heap.r != nil {
		// The slot table reserves each growth before making it: the
		// growth that cannot fit is refused before its table is mapped,
		// faulted in and filled (the cross join of issue 17 spent a third
		// of its CPU to refusal on that last growth). The per-batch
		// accounting in consume then settles the reservation to what is
		// held.
		r.setGrowReserve(func(delta int64) error { return h.heap.set(h.heap.held + delta) })
	}
	return h, nil
}

// boundAggregation is a spec bound to an input schema.
type boundAggregation struct {
	mode     AggMode
	schema   *arrow.Schema
	keyEvs   []Evaluator
	keyTypes []arrow.DataType
	aggs     []*boundAgg
	grouper  grouper
}

func bindAggregation(in *arrow.Schema, mem memory.Allocator, spec AggregateSpec) (*boundAggregation, error) {
	if spec.Mode < AggComplete || spec.Mode > AggMerge {
		return nil, fmt.Errorf("vector: unknown aggregation mode %d", spec.Mode)
	}
	b := &boundAggregation{mode: spec.Mode}
	var fields []arrow.Field
	for _, g := range spec.GroupBy {
		if g.Expr == nil {
			return nil, fmt.Errorf("vector: grouping key %q has no expression", g.Name)
		}
		ev, err := g.Expr.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		name := g.Name
		if name == "" {
			name = g.Expr.String()
		}
		t := Unwrap(ev.DataType())
		if err := checkKeyType(t); err != nil {
			return nil, newBindError(g.Expr, in, err)
		}
		b.keyEvs = append(b.keyEvs, ev)
		b.keyTypes = append(b.keyTypes, t)
		fields = append(fields, arrow.Field{Name: name, Type: t, Nullable: true})
	}
	for _, call := range spec.Aggregates {
		a, err := bindAggregate(in, mem, call, spec.Mode)
		if err != nil {
			return nil, err
		}
		b.aggs = append(b.aggs, a)
		if spec.Mode.producesState() {
			fields = append(fields, a.state...)
		} else {
			fields = append(fields, a.result)
		}
	}
	b.schema = arrow.NewSchema(fields, nil)
	g, err := newGrouper(mem, b.keyTypes)
	if err != nil {
		return nil, err
	}
	b.grouper = g
	return b, nil
}

// Schema implements Operator.
func (h *HashAggregate) Schema() *arrow.Schema { return h.bound.schema }

// Next implements Operator.
func (h *HashAggregate) Next(ctx context.Context) (arrow.Record, error) {
	if h.err != nil {
		return nil, h.err
	}
	if h.closed {
		return nil, errors.New("vector: hash aggregate used after Close")
	}
	if !h.consumed {
		if err := h.consume(ctx); err != nil {
			h.err = err
			return nil, err
		}
	}
	n := h.bound.grouper.numGroups()
	if h.next >= n {
		h.err = io.EOF
		return nil, io.EOF
	}
	lo, hi := h.next, min(h.next+maxAggOutputRows, n)
	rec, err := h.emit(lo, hi)
	if err != nil {
		h.err = err
		return nil, err
	}
	h.next = hi
	return rec, nil
}

// consume folds the whole input into the groups' state.
func (h *HashAggregate) consume(ctx context.Context) error {
	b := h.bound
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := h.input.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		err = h.consumeReleasing(ctx, rec)
		if err != nil {
			return err
		}
		// The tables grow by doubling: accounting once per batch lets them
		// overshoot the limit by at most one growth.
		if err := h.heap.set(b.heapBytes(h.gids)); err != nil {
			return err
		}
	}
	rows, err := finishContextOf(ctx, b.grouper)
	if err != nil {
		return err
	}
	h.consumed = true
	h.rows = rows
	// The input is exhausted: let it go now rather than at Close.
	return h.input.Close()
}

// consumeReleasing is consumeBatch releasing rec, by a defer: a query's
// allocator panics on an allocation far past its limit and the server
// recovers the panic, so the batch (perhaps a table's, not the query's)
// must not stay retained by the unwound frame.
func (h *HashAggregate) consumeReleasing(ctx context.Context, rec arrow.Record) error {
	defer rec.Release()
	return h.consumeBatch(ctx, rec)
}

func (h *HashAggregate) consumeBatch(ctx context.Context, rec arrow.Record) error {
	b := h.bound
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	h.gids = grow(h.gids, n)
	gids := h.gids[:n]
	keys, err := evalAll(ctx, b.keyEvs, rec)
	if err != nil {
		return err
	}
	err = groupContextOf(ctx, b.grouper, keys, gids)
	releaseArrays(keys)
	if err != nil {
		return err
	}
	groups := b.grouper.numGroups()
	if err := updateAggs(ctx, b.aggs, groups, gids, rec); err != nil {
		return err
	}
	return nil
}

// emit builds the output record of groups [lo, hi).
func (h *HashAggregate) emit(lo, hi int) (arrow.Record, error) {
	b := h.bound
	cols := make([]arrow.Array, 0, b.schema.NumFields())
	fail := func(err error) (arrow.Record, error) {
		releaseArrays(cols)
		return nil, err
	}
	keys, err := b.grouper.keys(h.mem, lo, hi)
	if err != nil {
		return fail(err)
	}
	cols = append(cols, keys...)
	for _, a := range b.aggs {
		a.acc.resize(b.grouper.numGroups())
		if b.mode.producesState() {
			st, err := a.acc.state(h.mem, lo, hi, h.rows)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, st...)
		} else {
			r, err := a.acc.final(h.mem, lo, hi, h.rows)
			if err != nil {
				return fail(err)
			}
			cols = append(cols, r)
		}
	}
	rec := array.NewRecord(b.schema, cols, int64(hi-lo))
	releaseArrays(cols)
	return rec, nil
}

// Close implements Operator.
func (h *HashAggregate) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	h.heap.release()
	h.bound.grouper.release()
	h.bound = &boundAggregation{schema: h.bound.schema}
	return h.input.Close()
}

// updateAggs folds rec's rows into the accumulators of aggs, row i into
// group gids[i], after sizing them for groups groups.
func updateAggs(ctx context.Context, aggs []*boundAgg, groups int, gids []int32, rec arrow.Record) error {
	for _, a := range aggs {
		if err := resizeContext(ctx, a.acc, groups); err != nil {
			return err
		}
		args, err := evalAll(ctx, a.args, rec)
		if err != nil {
			return err
		}
		err = a.acc.update(gids, args)
		releaseArrays(args)
		if err != nil {
			return err
		}
	}
	return nil
}
