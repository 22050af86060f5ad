package vector

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// Value rows straight from the accumulators. A streaming aggregation logs
// every group an epoch changed as its state row, which the stores keep
// encoded by a value encoder (NewValueEncoder). Gathering the groups'
// state into Arrow arrays (Values) only for the encoder to read them back
// column by column, with a hash per value that nothing reads, was most of
// q17's changelog: the accumulators hold every value already, so the
// encoder's bytes are written from them here, column by column into the
// rows. The result is byte for byte the encoder's over Values
// (TestEncodeValuesMatchesEncoder).

// GroupValues holds the value rows of some groups of a live aggregation
// (LiveAggregate.EncodeValues), in the order asked for. Its slices are
// reused by the next EncodeValues.
type GroupValues struct {
	buf  []byte
	offs []int32
	pos  []int32 // scratch: by row, its write position
}

// Len is the number of rows of the last EncodeValues.
func (v *GroupValues) Len() int { return max(len(v.offs)-1, 0) }

// Row returns row i's bytes: a view, valid until the next EncodeValues.
func (v *GroupValues) Row(i int) []byte { return v.buf[v.offs[i]:v.offs[i+1]] }

// HeapBytes is the Go-heap memory v holds (its buffers' capacity).
func (v *GroupValues) HeapBytes() int64 {
	return int64(cap(v.buf)) + int64(cap(v.offs)+cap(v.pos))*4
}

// valueRowWriter is a live accumulator whose state columns have a fixed
// width in a value encoder's rows, written straight from its arrays.
type valueRowWriter interface {
	// valueColumns is the number of its state columns, and valueWidth
	// the encoded width of column c when not null (its flag byte and
	// value), 0 for a layout it leaves to the encoder.
	valueColumns() int
	valueWidth(c int) int32
	// nullableValues reports whether a state column may be null (then
	// one byte only), which addValueWidths accounts.
	nullableValues() bool
	// addValueWidths adds, for group gids[i], the bytes of its state
	// columns to widths[i] (called only when nullableValues).
	addValueWidths(widths []int32, gids []int32, rows []int64)
	// writeValues writes the state columns of group gids[i] at pos[i]
	// and advances it.
	writeValues(buf []byte, pos []int32, gids []int32, rows []int64)
}

// EncodeValues encodes the state columns (Schema's after the keys) of the
// groups gids into out exactly as enc (a value encoder over those
// columns' types) would encode the arrays Values(gids) returns, without
// building the arrays and without the encoder's hashes. It reports false
// when it cannot (out then holds no rows of use): enc is not a value
// encoder of those types, an aggregate's state is not one it writes, or
// the rows pass 2 GiB (the caller then encodes Values).
func (l *LiveAggregate) EncodeValues(enc *KeyEncoder, gids []int32, out *GroupValues) (bool, error) {
	if enc == nil || !enc.Exact() || !l.valuesLike(enc.Types()) {
		return false, nil
	}
	if enc.IsFixed() && fixedWidth(enc.Types()[0].ID()) != 8 {
		// One column on the encoder's fixed path is stored framed as a
		// flag byte and its 64-bit word (the state store's rowCodec), not
		// as its own width: a 32-bit value written here as 5 bytes made
		// a min/max of an int32 or date column unreadable at restore.
		return false, nil
	}
	groups := l.b.grouper.numGroups()
	for _, g := range gids {
		if g < 0 || int(g) >= groups {
			return false, fmt.Errorf("vector: live aggregation: values of group %d of %d", g, groups)
		}
	}
	l.rows = growZero(l.rows, groups)
	n := len(gids)
	fixed := int32(0)
	nullable := false
	for _, a := range l.accs {
		a.resize(groups)
		w := a.(valueRowWriter)
		fixed += rowWidth(w)
		nullable = nullable || w.nullableValues()
	}
	// Offsets: every row fixed bytes, less one value per null column.
	out.offs = grow(out.offs, n+1)
	out.pos = grow(out.pos, n)
	total := int64(0)
	if !nullable {
		for i := range n {
			out.offs[i] = int32(total)
			total += int64(fixed)
		}
	} else {
		widths := out.pos
		clear(widths)
		for _, a := range l.accs {
			if w := a.(valueRowWriter); w.nullableValues() {
				w.addValueWidths(widths, gids, l.rows)
			} else {
				sum := rowWidth(w)
				for i := range widths {
					widths[i] += sum
				}
			}
		}
		for i, w := range widths {
			out.offs[i] = int32(total)
			total += int64(w)
		}
	}
	if total > math.MaxInt32 {
		return false, nil // past the offsets' range: the encoder's path decides
	}
	out.offs[n] = int32(total)
	out.buf = grow(out.buf, int(total))
	copy(out.pos, out.offs[:n])
	for _, a := range l.accs {
		a.(valueRowWriter).writeValues(out.buf, out.pos, gids, l.rows)
	}
	return true, nil
}

// valuesLike reports whether every accumulator writes its value rows
// here and their columns are the types types (a value encoder's).
func (l *LiveAggregate) valuesLike(types []arrow.DataType) bool {
	nKeys := len(l.spec.GroupBy)
	if len(types) != l.schema.NumFields()-nKeys {
		return false
	}
	col := 0
	for _, a := range l.accs {
		w, ok := a.(valueRowWriter)
		if !ok {
			return false
		}
		for c := range w.valueColumns() {
			x := w.valueWidth(c)
			if x == 0 || col >= len(types) {
				return false
			}
			t := types[col]
			if !TypesEqual(t, Unwrap(l.schema.Field(nKeys+col).Type)) || !plainValueType(t) || fixedWidth(t.ID())+1 != x {
				return false
			}
			col++
		}
	}
	return col == len(types)
}

// plainValueType reports whether a value encoder writes a value of type
// t as a flag byte and its little-endian bytes (no normalization).
func plainValueType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT32, arrow.DATE32, arrow.INT64, arrow.TIMESTAMP, arrow.DURATION, arrow.FLOAT64, arrow.DECIMAL128:
		return true
	}
	return false
}

// rowWidth is the bytes of w's state columns when none is null.
func rowWidth(w valueRowWriter) int32 {
	sum := int32(0)
	for c := range w.valueColumns() {
		sum += w.valueWidth(c)
	}
	return sum
}

// put64, put32 and putDecimal write a present value (a flag byte, then
// its little-endian bytes) at buf[p:] and return the position after it.
func put64(buf []byte, p int32, v uint64) int32 {
	buf[p] = 1
	binary.LittleEndian.PutUint64(buf[p+1:], v)
	return p + 9
}

func put32(buf []byte, p int32, v uint32) int32 {
	buf[p] = 1
	binary.LittleEndian.PutUint32(buf[p+1:], v)
	return p + 5
}

func putDecimal(buf []byte, p int32, v decimal128.Num) int32 {
	buf[p] = 1
	binary.LittleEndian.PutUint64(buf[p+1:], v.LowBits())
	binary.LittleEndian.PutUint64(buf[p+9:], uint64(v.HighBits()))
	return p + 17
}

// writeCounts writes the non-null counts nullCounter's countArray would
// give (counts[g] when merging states).
func (c *nullCounter) writeCounts(buf []byte, pos []int32, gids []int32, merge bool, counts, rows []int64) {
	switch {
	case merge:
		for i, g := range gids {
			pos[i] = put64(buf, pos[i], uint64(counts[g]))
		}
	case c.nulls == nil:
		for i, g := range gids {
			pos[i] = put64(buf, pos[i], uint64(rows[g]))
		}
	default:
		for i, g := range gids {
			pos[i] = put64(buf, pos[i], uint64(rows[g]-c.nulls[g]))
		}
	}
}

func (c *countAcc) valueColumns() int                              { return 1 }
func (c *countAcc) valueWidth(int) int32                           { return 9 }
func (c *countAcc) nullableValues() bool                           { return false }
func (c *countAcc) addValueWidths(_ []int32, _ []int32, _ []int64) {}
func (c *countAcc) writeValues(buf []byte, pos []int32, gids []int32, rows []int64) {
	c.writeCounts(buf, pos, gids, c.merge, c.countsOr(rows), rows)
}

// sumAcc's state is its sum (no nulls: stateAt gives no validity) and
// its count.
func (s *sumAcc) valueColumns() int { return 2 }
func (s *sumAcc) valueWidth(c int) int32 {
	switch {
	case c == 1, s.kind == sumInt, s.kind == sumFloat:
		return 9
	case s.kind == sumDecimal:
		return 17
	}
	return 0
}
func (s *sumAcc) nullableValues() bool                           { return false }
func (s *sumAcc) addValueWidths(_ []int32, _ []int32, _ []int64) {}
func (s *sumAcc) writeValues(buf []byte, pos []int32, gids []int32, rows []int64) {
	switch s.kind {
	case sumInt:
		for i, g := range gids {
			pos[i] = put64(buf, pos[i], uint64(s.ints[g]))
		}
	case sumDecimal:
		for i, g := range gids {
			pos[i] = putDecimal(buf, pos[i], s.decs[g])
		}
	default:
		for i, g := range gids {
			pos[i] = put64(buf, pos[i], math.Float64bits(s.floats[g]))
		}
	}
	s.writeCounts(buf, pos, gids, s.merge, s.countsOr(rows), rows)
}

func (m *minMaxAcc) valueColumns() int { return 1 }

// valueWidth: the narrow types (stored wider) and strings and booleans
// are left to the encoder.
func (m *minMaxAcc) valueWidth(int) int32 {
	if m.narrow != nil {
		return 0
	}
	switch m.kind {
	case valInt64, valFloat64:
		return 9
	case valInt32:
		return 5
	case valDecimal:
		return 17
	}
	return 0
}

func (m *minMaxAcc) nullableValues() bool { return true }

// addValueWidths: a group with no valid value is null (stateAt's valid).
func (m *minMaxAcc) addValueWidths(widths []int32, gids []int32, rows []int64) {
	w := m.valueWidth(0)
	for i, g := range gids {
		if m.valid(int(g), rows) > 0 {
			widths[i] += w
		} else {
			widths[i]++
		}
	}
}

// writeValues writes a group with no valid value as null (stateAt's
// valid), one loop per kind.
func (m *minMaxAcc) writeValues(buf []byte, pos []int32, gids []int32, rows []int64) {
	switch m.kind {
	case valInt64:
		for i, g := range gids {
			if !m.writeNull(buf, pos, i, g, rows) {
				pos[i] = put64(buf, pos[i], uint64(m.i64[g]))
			}
		}
	case valInt32:
		for i, g := range gids {
			if !m.writeNull(buf, pos, i, g, rows) {
				pos[i] = put32(buf, pos[i], uint32(m.i32[g]))
			}
		}
	case valFloat64:
		for i, g := range gids {
			if !m.writeNull(buf, pos, i, g, rows) {
				pos[i] = put64(buf, pos[i], math.Float64bits(m.f64[g]))
			}
		}
	case valDecimal:
		for i, g := range gids {
			if !m.writeNull(buf, pos, i, g, rows) {
				pos[i] = putDecimal(buf, pos[i], m.decs[g])
			}
		}
	}
}

// writeNull writes row i (group g) as null and reports true when the
// group has no valid value.
func (m *minMaxAcc) writeNull(buf []byte, pos []int32, i int, g int32, rows []int64) bool {
	if m.valid(int(g), rows) > 0 {
		return false
	}
	buf[pos[i]] = 0
	pos[i]++
	return true
}
