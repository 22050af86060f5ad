package stateful

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// A deferred residual condition (stateful_join_output.go) read the
// epoch's candidate pairs gathered whole: every column of both sides,
// then a Take of every column of the passing pairs. Nexmark q4's
// condition `B.dateTime BETWEEN A.dateTime AND A.expires` reads three of
// the join's seven columns and fails about a third of the candidates
// (bids on an auction that has closed), so most of the gathered bytes
// were copied twice or dropped. The condition now reads only its own
// columns, gathered for every candidate, and the output columns are
// gathered once, for the passing pairs.

// narrowResidual is the residual condition over only the joined columns
// it reads.
type narrowResidual struct {
	cols   []int         // the joined ordinals it reads, ascending
	schema *arrow.Schema // those fields of the joined schema
	expr   vector.Expr   // the residual over schema
}

// newNarrowResidual returns the residual over the joined columns it
// reads (nil when it reads every column, or none: the whole gather is
// no dearer).
func newNarrowResidual(residual plan.Expr, joined *arrow.Schema) (*narrowResidual, error) {
	if residual == nil {
		return nil, nil
	}
	cols := plan.Columns(residual)
	if len(cols) == 0 || len(cols) >= joined.NumFields() {
		return nil, nil
	}
	slices.Sort(cols)
	at := make(map[int]int, len(cols))
	fields := make([]arrow.Field, len(cols))
	for k, c := range cols {
		at[c] = k
		fields[k] = joined.Field(c)
	}
	narrow, err := plan.Transform(residual, func(x plan.Expr) (plan.Expr, error) {
		if c, ok := x.(*plan.ColumnRef); ok {
			cp := *c
			cp.Index = at[c.Index]
			return &cp, nil
		}
		return x, nil
	})
	if err != nil {
		return nil, err
	}
	v, err := plan.ToVectorExpr(narrow, &plan.Env{})
	if err != nil {
		return nil, fmt.Errorf("arrowstream: join condition %s: %w", residual, err)
	}
	return &narrowResidual{cols: cols, schema: arrow.NewSchema(fields, nil), expr: v}, nil
}

// filterPairsNarrow is filterPairs with the narrow residual: the
// condition's columns gathered for every candidate pair, the output's for
// the passing ones. It overwrites pairs' lists (the passing pairs first).
func (s *statefulJoin) filterPairsNarrow(ctx context.Context, pairs []joinOutPairs) (arrow.Record, error) {
	nr := s.narrow
	cand, err := s.gatherPairCols(pairs, nr.schema, nr.cols)
	if cand == nil || err != nil {
		return nil, err
	}
	keep, err := nr.mask(ctx, s, cand)
	cand.Release()
	if err != nil {
		return nil, err
	}
	n := countTrue(keep)
	switch {
	case n == 0:
		return nil, nil
	case n == len(keep):
		return s.gatherPairs(s.reducePairs(pairs), s.out)
	}
	// The passing pairs, as pairs of the same records (borrowed from
	// pairs, which hold them), moved to the front of pairs' own lists:
	// they are the epoch's (joinEpoch) and read no more after this
	// filter. A fresh pair of lists of the passing pairs was a twentieth
	// of q4's Go-heap bytes (session 23).
	var kept []joinOutPairs
	k := 0
	for _, p := range pairs {
		m := 0
		for x := range p.li {
			if keep[k] {
				p.li[m], p.ri[m] = p.li[x], p.ri[x]
				m++
			}
			k++
		}
		if m > 0 {
			kept = append(kept, joinOutPairs{l: p.l, r: p.r, li: p.li[:m:m], ri: p.ri[:m:m]})
		}
	}
	return s.gatherPairs(s.reducePairs(kept), s.out)
}

// mask evaluates the narrow residual over cand, the candidates' columns
// it reads: true where a pair passes.
func (nr *narrowResidual) mask(ctx context.Context, s *statefulJoin, cand arrow.Record) ([]bool, error) {
	return s.conditionMask(ctx, nr.expr, nr.schema, cand)
}
