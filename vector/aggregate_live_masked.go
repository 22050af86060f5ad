package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Conditional sums as masked adds. Nexmark q17 counts bids by price range
// with sum(CASE WHEN price < 10000 THEN 1 ELSE 0 END): evaluated as an
// expression, each such CASE evaluates its condition, builds a taken
// bitmap, then an integer column of the batch's length from the two
// constants, which the sum reads back. A raw fold needs none of that
// column: the sum of group g gains the THEN constant for a row whose
// condition is true and the ELSE constant for the others (false or NULL:
// CASE's ternary logic), so the fold reads the condition's bits and adds
// one of two numbers. The state (sum and non-null count) is exactly what
// the column would have given.

// maskedSum is the argument of an integer sum that is
// CASE WHEN cond THEN then ELSE els END with non-null integer constants.
type maskedSum struct {
	cond      Evaluator
	then, els int64
	arg       Evaluator // the whole CASE, for an overflow's error message
}

// maskedSumOf returns the masked form of a sum's arguments, or nil when
// they are not one such CASE.
func maskedSumOf(args []Evaluator) *maskedSum {
	if len(args) != 1 {
		return nil
	}
	c, ok := args[0].(*caseEval)
	if !ok || len(c.conds) != 1 || len(c.values) != 2 {
		return nil
	}
	switch c.dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
	default:
		return nil
	}
	then, ok1 := constInt(c.values[0])
	els, ok2 := constInt(c.values[1])
	if !ok1 || !ok2 {
		return nil
	}
	return &maskedSum{cond: c.conds[0], then: then, els: els, arg: c}
}

// constInt is the value of a non-null integer constant.
func constInt(ev Evaluator) (int64, bool) {
	v, ok := constValue(ev)
	if !ok {
		return 0, false
	}
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// update folds the rows of rec (row i in group gids[i]) into s, an
// integer sum: every row is non-null (both branches are constants), so
// each counts (unless the row counts imply the counts), and adds then
// where the condition holds, els elsewhere.
// It declines (false) when s is not a plain integer sum.
func (m *maskedSum) update(ctx context.Context, s *sumAcc, rec arrow.Record, gids []int32, all []uint64, mem memory.Allocator) (bool, error) {
	if s.kind != sumInt || s.avg {
		return false, nil
	}
	n := len(gids)
	ca, err := evalWhere(ctx, m.cond, rec, all, n, mem)
	if err != nil {
		return true, err
	}
	defer ca.Release()
	cv, cx := validityWords(ca), boolValueWords(ca)
	sums, counts, byRows := s.ints, s.counts, s.byRows
	for lo := 0; lo < n; lo += 64 {
		w := cv.word(lo>>6) & cx.word(lo>>6)
		hi := min(lo+64, n)
		for i := lo; i < hi; i++ {
			g := gids[i]
			var y int64
			if w>>(uint(i-lo))&1 != 0 {
				y = m.then
			} else {
				y = m.els
			}
			x := sums[g]
			r := x + y
			if (x^r)&(y^r) < 0 {
				return true, m.overflow(ctx, s, rec, gids, i)
			}
			sums[g] = r
			if !byRows {
				counts[g]++
			}
		}
	}
	return true, nil
}

// overflow builds the error the column path gives for row i.
func (m *maskedSum) overflow(ctx context.Context, s *sumAcc, rec arrow.Record, gids []int32, i int) error {
	arg, err := m.arg.Eval(ctx, rec)
	if err != nil {
		return fmt.Errorf("vector: %s: %w", s.label, err)
	}
	defer arg.Release()
	return s.overflowError(i, arg, fmt.Sprint(s.ints[gids[i]]))
}
