package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Final rows passed through. FinalRows finalizes partial-state rows whose
// keys are distinct, every row its own group: it binds a final
// aggregation, grows its accumulators, merges each state column into them
// and reads them out again. For count and for min and max of integral
// values the final value of one state row is its state value itself when
// that is not null (a count's null state counts 0, a null min stays
// null), so the final record is the state record's columns under the
// final schema: nothing computed, nothing copied. A streaming
// aggregation's evicted windows (Nexmark q5's counts and their maximum)
// are finalized this way every evicting epoch.

// FinalPass finalizes the partial-state rows of one layout and spec by
// passing their columns through (see above). It is bound once and read
// by one goroutine at a time.
type FinalPass struct {
	schema *arrow.Schema // the final layout, FinalRows' schema
	cols   []int         // the input column of each output column
	aggs   []int         // the output columns that are aggregates (null state: not passed)
}

// NewFinalPass returns the pass of spec (the partial aggregation's calls,
// keys the first columns of layout in, as for FinalRows), or false when
// some key is not a plain column or some aggregate's final value is not
// its one state column as it is.
func NewFinalPass(mem memory.Allocator, in *arrow.Schema, spec AggregateSpec) (*FinalPass, bool, error) {
	spec.Mode = AggFinal
	b, err := bindAggregation(in, mem, spec)
	if err != nil {
		return nil, false, fmt.Errorf("vector: final pass: %w", err)
	}
	b.grouper.release()
	p := &FinalPass{schema: b.schema}
	for _, ev := range b.keyEvs {
		c, ok := ev.(*columnEval)
		if !ok || len(c.path) > 0 {
			return nil, false, nil
		}
		p.cols = append(p.cols, c.col)
	}
	for _, a := range b.aggs {
		if len(a.args) != 1 || !passesState(a) {
			return nil, false, nil
		}
		c, ok := a.args[0].(*columnEval)
		if !ok || len(c.path) > 0 {
			return nil, false, nil
		}
		p.aggs = append(p.aggs, len(p.cols))
		p.cols = append(p.cols, c.col)
	}
	for i, c := range p.cols {
		if !arrow.TypeEqual(in.Field(c).Type, p.schema.Field(i).Type) {
			return nil, false, nil
		}
	}
	return p, true, nil
}

// passesState reports whether the final value of one non-null state
// value of a is that value: a count's merged count, the min or max of
// integral values stored as they are (not widened).
func passesState(a *boundAgg) bool {
	switch acc := a.acc.(type) {
	case *countAcc:
		return acc.merge
	case *minMaxAcc:
		return acc.narrow == nil && (acc.kind == valInt64 || acc.kind == valInt32)
	}
	return false
}

// Schema is the final layout.
func (p *FinalPass) Schema() *arrow.Schema { return p.schema }

// Rows returns the final rows of rec (partial-state rows with distinct
// keys, in the layout the pass was bound to), owned by the caller and
// sharing rec's buffers: the record FinalRows gives. It returns false,
// and no record, when an aggregate's state column of rec holds a null or
// a column's type is not the layout's (the caller uses FinalRows).
func (p *FinalPass) Rows(rec arrow.Record) (arrow.Record, bool) {
	if int(rec.NumCols()) <= maxInt(p.cols) {
		return nil, false
	}
	for _, i := range p.aggs {
		if rec.Column(p.cols[i]).NullN() > 0 {
			return nil, false
		}
	}
	cols := make([]arrow.Array, len(p.cols))
	for i, c := range p.cols {
		cols[i] = rec.Column(c)
		if !arrow.TypeEqual(cols[i].DataType(), p.schema.Field(i).Type) {
			return nil, false
		}
	}
	return array.NewRecord(p.schema, cols, rec.NumRows()), true
}

// maxInt is the largest of xs (-1 when empty).
func maxInt(xs []int) int {
	m := -1
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
