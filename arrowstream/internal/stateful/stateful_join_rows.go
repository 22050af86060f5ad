package stateful

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// plainRecord returns the columns of rec that codec covers as a record of
// the codec's schema (owned by the caller): dictionary-encoded columns
// decoded, other columns shared. The join's state and output hold plain
// values.
func plainRecord(mem memory.Allocator, codec *rowCodec, rec arrow.Record) (arrow.Record, error) {
	cols := make([]arrow.Array, len(codec.cols))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i, ci := range codec.cols {
		a := rec.Column(ci)
		want := codec.schema.Field(i).Type
		switch {
		case arrow.TypeEqual(a.DataType(), want):
			a.Retain()
			cols[i] = a
		case a.DataType().ID() == arrow.DICTIONARY && arrow.TypeEqual(a.(*array.Dictionary).Dictionary().DataType(), want):
			d, err := vector.DecodeDictionary(mem, a)
			if err != nil {
				release()
				return nil, fmt.Errorf("column %s: %w", codec.schema.Field(i).Name, err)
			}
			cols[i] = d
		default:
			// Dictionaries nested in a type: through the row encoding,
			// which decodes them.
			one, err := newValueCodec(mem, rec.Schema(), []int{ci})
			if err != nil {
				release()
				return nil, err
			}
			if err := one.encode(rec); err != nil {
				release()
				return nil, err
			}
			rows := make([][]byte, rec.NumRows())
			for r := range rows {
				rows[r] = append([]byte(nil), one.at(r)...)
			}
			dec, err := one.decode(mem, rows)
			if err != nil {
				release()
				return nil, fmt.Errorf("column %s: %w", codec.schema.Field(i).Name, err)
			}
			cols[i] = dec[0]
		}
	}
	out := array.NewRecord(codec.schema, cols, rec.NumRows())
	release()
	return out, nil
}

// decodeSide decodes encoded rows of a side into r.rec (an empty record
// for none).
func (s *statefulJoin) decodeSide(codec *rowCodec, r *sideRows, enc [][]byte) error {
	if len(enc) == 0 {
		r.rec = s.empty.get(s.mem, codec.schema)
		return nil
	}
	cols, err := codec.decode(s.mem, enc)
	if err != nil {
		return err
	}
	r.rec = assemble(codec.schema, nil, cols, len(enc))
	return nil
}

// evictThreshold is the side's state-eviction threshold (µs) of the epoch,
// and whether the side evicts at all.
func (s *statefulJoin) evictThreshold(ep Epoch, side *joinSide) (int64, bool) {
	if !ep.HasWatermark || side.evict == evictNever {
		return 0, false
	}
	thr := ep.WatermarkMs * 1000
	if side.evict == evictValue {
		thr += side.offset
	}
	return thr, true
}
