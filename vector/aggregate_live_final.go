package vector

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Final values of any set of live groups, read straight from the live
// accumulators. An Update-mode streaming aggregation emits the final rows
// of the groups an epoch changed: finalizing their partial state
// (State, then FinalRows) binds a final aggregation, grows its
// accumulators, merges every state column into them and reads them out
// again, when the live accumulators already hold what that aggregation
// would. Final gathers the values and finishes them (avg's division, a
// sum's NULL when it saw no value) in one pass per aggregate.

// finalAtAcc is a live accumulator that can finalize any set of groups.
type finalAtAcc interface {
	// finalAt returns the final values of the groups gids, in that order;
	// rows are the row counts by group id (as for final).
	finalAt(mem memory.Allocator, gids []int32, rows []int64) (arrow.Array, error)
}

// liveFinal is what Final binds once per live aggregation.
type liveFinal struct {
	schema *arrow.Schema // the final layout: the keys, one column per aggregate
	ok     bool          // every accumulator can finalize by group id
}

// Final returns the final rows of the groups gids, in that order: the
// record the final aggregation of State(gids) gives (FinalRows; the same
// schema and values), owned by the caller. It returns false, and no
// record, when an aggregate cannot be finalized from the live state by
// group (the caller finalizes State's rows instead).
func (l *LiveAggregate) Final(gids []int32) (arrow.Record, bool, error) {
	f, err := l.bindFinal()
	if err != nil || !f.ok {
		return nil, false, err
	}
	groups := l.b.grouper.numGroups()
	for _, g := range gids {
		if g < 0 || int(g) >= groups {
			return nil, false, fmt.Errorf("vector: live aggregation: group %d of %d", g, groups)
		}
	}
	cols, err := l.keysAt(gids)
	if err != nil {
		return nil, false, err
	}
	l.rows = growZero(l.rows, groups)
	for _, a := range l.accs {
		a.resize(groups)
		col, err := a.(finalAtAcc).finalAt(l.mem, gids, l.rows)
		if err != nil {
			releaseArrays(cols)
			return nil, false, err
		}
		cols = append(cols, col)
	}
	for i, c := range cols {
		if !TypesEqual(c.DataType(), f.schema.Field(i).Type) {
			// A layout Final does not reproduce (FinalRows declines such
			// keys too): the caller's general path decides.
			releaseArrays(cols)
			return nil, false, nil
		}
	}
	rec := array.NewRecord(f.schema, cols, int64(len(gids)))
	releaseArrays(cols)
	return rec, true, nil
}

// bindFinal binds the final layout of the live aggregation once.
func (l *LiveAggregate) bindFinal() (*liveFinal, error) {
	if l.final != nil {
		return l.final, nil
	}
	spec := l.spec
	spec.Mode = AggFinal
	b, err := bindAggregation(l.schema, l.mem, spec)
	if err != nil {
		return nil, err
	}
	b.grouper.release() // only the schema is wanted
	f := &liveFinal{schema: b.schema, ok: len(b.aggs) == len(l.accs)}
	for _, a := range l.accs {
		if _, ok := a.(finalAtAcc); !ok {
			f.ok = false
		}
	}
	l.final = f
	return f, nil
}

// gatherFixedArray builds an array of the fixed-width type dt whose row i
// is src[gids[i]], gathered straight into the array's buffer; valid, when
// not nil, marks the non-null rows.
func gatherFixedArray[T any](mem memory.Allocator, dt arrow.DataType, src []T, gids []int32, valid []bool) arrow.Array {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(gids) * int(unsafe.Sizeof(zero)))
	if dst := castSlice[T](buf.Bytes()); dst != nil {
		dst = dst[:len(gids)]
		for i, g := range gids {
			dst[i] = src[g]
		}
	}
	return fixedArrayOf(mem, dt, len(gids), buf, valid)
}

// fixedArrayOf makes an array of the fixed-width type dt over the values
// buf (whose reference it takes) and the validity valid.
func fixedArrayOf(mem memory.Allocator, dt arrow.DataType, n int, buf *memory.Buffer, valid []bool) arrow.Array {
	bm, nulls := validityBuffer(mem, valid)
	data := array.NewData(dt, n, []*memory.Buffer{bm, buf}, nil, nulls, 0)
	buf.Release()
	if bm != nil {
		bm.Release()
	}
	defer data.Release()
	return array.MakeFromData(data)
}

func (c *countAcc) finalAt(mem memory.Allocator, gids []int32, rows []int64) (arrow.Array, error) {
	if c.merge {
		return gatherFixedArray(mem, Int64, c.countsOr(rows), gids, nil), nil
	}
	st, err := c.stateAt(mem, gids, rows)
	if err != nil {
		return nil, err
	}
	return st[0], nil
}

func (m *minMaxAcc) finalAt(mem memory.Allocator, gids []int32, rows []int64) (arrow.Array, error) {
	st, err := m.stateAt(mem, gids, rows) // the state is the value
	if err != nil {
		return nil, err
	}
	return st[0], nil
}

// finalAt is final for the groups gids: a sum is NULL and an average
// empty when the group saw no value.
func (s *sumAcc) finalAt(mem memory.Allocator, gids []int32, rows []int64) (arrow.Array, error) {
	valid := s.fin.validOf(len(gids))
	counts := s.fin.countsOf(len(gids))
	for i, g := range gids {
		c := int64(0)
		if s.merge {
			c = s.countsOr(rows)[g]
		} else {
			c = s.valid(int(g), rows)
		}
		counts[i] = c
		valid[i] = c > 0
	}
	switch {
	case s.avg && s.avgType != nil:
		means := make([]decimal128.Num, len(gids))
		for i, c := range counts {
			if c == 0 {
				continue
			}
			m, ok := avgDecimal(s.decs[gids[i]], c, s.resType.(*arrow.Decimal128Type), s.avgType)
			if !ok {
				return nil, fmt.Errorf("vector: %s: the mean does not fit %s: %w", s.label, TypeName(s.avgType), ErrOverflow)
			}
			means[i] = m
		}
		return newFixedArray(mem, s.avgType, means, valid), nil
	case s.avg:
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(len(gids) * 8)
		if means := castSlice[float64](buf.Bytes()); means != nil {
			means = means[:len(gids)]
			for i, c := range counts {
				means[i] = 0
				if c > 0 {
					means[i] = s.floats[gids[i]] / float64(c)
				}
			}
		}
		return fixedArrayOf(mem, Float64, len(gids), buf, valid), nil
	}
	switch s.kind {
	case sumInt:
		return gatherFixedArray(mem, s.resType, s.ints, gids, valid), nil
	case sumDecimal:
		return gatherFixedArray(mem, s.resType, s.decs, gids, valid), nil
	}
	return gatherFixedArray(mem, Float64, s.floats, gids, valid), nil
}

func (f *firstLastAcc) finalAt(mem memory.Allocator, gids []int32, rows []int64) (arrow.Array, error) {
	st, err := f.stateAt(mem, gids, rows)
	if err != nil {
		return nil, err
	}
	st[1].Release() // the set flags: state only
	return st[0], nil
}
