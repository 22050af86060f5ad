package vector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// Array (list) keys. A list key row encodes as a flag byte (0 null, 1
// valid), then, when valid, a 4-byte element count and the concatenated
// encodings of its elements. An element's encoding is the one the KeyEncoder
// gives a single key column on the bytes path (itself a flag and a value),
// so element encodings are self-delimiting and two lists have equal bytes
// exactly when they have the same length and pairwise equal elements, with
// null elements equal to each other and Spark's float equality (NaN = NaN,
// -0.0 = 0.0): Spark's equality for grouping, DISTINCT, set operations and
// join keys.
//
// The elements of a whole list column are encoded in one pass by a nested
// encoder over the column's child values (recursively for arrays of arrays
// or of structs); each row's key is then a single copy of the contiguous
// range of element keys its offsets delimit. No per-row interface calls.

// listKeys is the element keys of one list leaf: enc holds the keys of the
// child values [base, end) of the list column.
type listKeys struct {
	arr       *array.List
	enc       *KeyEncoder
	base, end int32
}

// checkNestedKeyType accepts FLOAT and arrays of key types.
func checkNestedKeyType(t arrow.DataType) error {
	switch t.ID() {
	case arrow.FLOAT32:
		return nil
	case arrow.LIST:
		return checkKeyType(Unwrap(t.(*arrow.ListType).Elem()))
	}
	return keyTypeError(t)
}

// keyTypeError refuses a key type. Maps cannot be compared in Spark, which
// refuses them as grouping expressions with the error class below.
func keyTypeError(t arrow.DataType) error {
	if t.ID() == arrow.MAP {
		return fmt.Errorf("%s cannot be a grouping or join key: [GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE] its data type %q is not an orderable data type: %w",
			TypeName(t), strings.ToUpper(TypeName(t)), ErrType)
	}
	return fmt.Errorf("%s cannot be a grouping or join key: %w", TypeName(t), ErrType)
}

// listOffsets returns the n+1 offsets of l's rows (Arrow's List.Offsets is
// the whole buffer, not adjusted for a slice's offset).
func listOffsets(l *array.List) []int32 {
	if l.Len() == 0 {
		return []int32{0}
	}
	off := l.Data().Offset()
	return l.Offsets()[off : off+l.Len()+1]
}

// flattenListKey appends the leaf of list column l (retained) to leaves;
// its element keys are computed by prepareListKeys.
func flattenListKey(l *array.List, leaves []keyLeaf) ([]keyLeaf, error) {
	offs := listOffsets(l)
	l.Retain()
	lk := &listKeys{arr: l, base: offs[0], end: offs[len(offs)-1]}
	return append(leaves, keyLeaf{arr: l, list: lk}), nil
}

// prepareListKeys encodes the elements of every list leaf, with nested
// encoders kept in e.subs between batches.
func (e *KeyEncoder) prepareListKeys(ctx context.Context, leaves []keyLeaf) error {
	k := 0
	for _, l := range leaves {
		if l.list == nil {
			continue
		}
		elem := Unwrap(l.list.arr.DataType().(*arrow.ListType).Elem())
		if k == len(e.subs) {
			sub, err := NewKeyEncoder(e.mem, []arrow.DataType{elem})
			if err != nil {
				return err
			}
			// Element keys must be bytes, to be concatenated per row; a
			// value encoder's elements keep their floats' bits too.
			sub.fixed = false
			sub.exact = e.exact
			e.subs = append(e.subs, sub)
		}
		sub := e.subs[k]
		k++
		vals := array.NewSlice(l.list.arr.ListValues(), int64(l.list.base), int64(l.list.end))
		err := sub.EncodeContext(ctx, []arrow.Array{vals})
		vals.Release()
		if err != nil {
			return fmt.Errorf("vector: elements of %s key: %w", TypeName(l.list.arr.DataType()), err)
		}
		l.list.enc = sub
	}
	return nil
}

// release drops the references of lk (its array is the leaf's, which
// the leaf releases).
func (lk *listKeys) release() {
	if lk != nil {
		lk.arr, lk.enc = nil, nil
	}
}

// elemRange returns the byte range in lk.enc.buf of the elements [a, b).
func (lk *listKeys) elemRange(a, b int32) (int32, int32) {
	return lk.enc.offs[a-lk.base], lk.enc.offs[b-lk.base]
}

// addWidths adds the key widths of the rows of c (lk.arr or a slice of it).
func (lk *listKeys) addWidths(widths []int32, c *array.List) error {
	offs := listOffsets(c)
	bm, off := validBits(c)
	for i := range widths {
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			widths[i]++
			continue
		}
		a, b := lk.elemRange(offs[i], offs[i+1])
		widths[i] += 5 + b - a
	}
	return nil
}

// writeKeys writes the keys of the rows of c (lk.arr or a slice of it).
func (lk *listKeys) writeKeys(buf []byte, pos []int32, h []uint64, c *array.List) {
	offs := listOffsets(c)
	bm, off := validBits(c)
	src := lk.enc.buf
	for i := range pos {
		p := pos[i]
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
			continue
		}
		a, b := lk.elemRange(offs[i], offs[i+1])
		buf[p] = 1
		binary.LittleEndian.PutUint32(buf[p+1:], uint32(offs[i+1]-offs[i]))
		copy(buf[p+5:], src[a:b])
		end := p + 5 + b - a
		pos[i], h[i] = end, mixIn(h[i], hashBytes(buf[p+1:end]))
	}
}

// float32Key normalizes a FLOAT for grouping as floatKey does a DOUBLE.
func float32Key(v float32) uint32 {
	if v == 0 {
		return 0
	}
	if v != v {
		return 0x7fc00000
	}
	return math.Float32bits(v)
}

func writeFloat32Keys(buf []byte, pos []int32, h []uint64, vals []float32, bm []byte, off int, exact bool) {
	for i, v := range vals {
		p := pos[i]
		if bm != nil && !bitutil.BitIsSet(bm, off+i) {
			buf[p], pos[i], h[i] = 0, p+1, mixIn(h[i], nullHash)
			continue
		}
		word := math.Float32bits(v)
		if !exact {
			word = float32Key(v)
		}
		buf[p] = 1
		binary.LittleEndian.PutUint32(buf[p+1:], word)
		pos[i], h[i] = p+5, mixIn(h[i], fmix64(uint64(word)))
	}
}

// skipListElems consumes a valid list's count and element encodings.
func skipListElems(lt *arrow.ListType, key []byte) ([]byte, error) {
	if len(key) < 4 {
		return nil, errShortKey
	}
	n := binary.LittleEndian.Uint32(key)
	key = key[4:]
	elem := Unwrap(lt.Elem())
	for ; n > 0; n-- {
		var err error
		if key, err = skipValue(elem, key); err != nil {
			return nil, err
		}
	}
	return key, nil
}

// decodeListValue decodes a valid list (after its flag) into b.
func decodeListValue(b *array.ListBuilder, key []byte) ([]byte, error) {
	if len(key) < 4 {
		return nil, errShortKey
	}
	n := binary.LittleEndian.Uint32(key)
	key = key[4:]
	b.Append(true)
	vb := b.ValueBuilder()
	for ; n > 0; n-- {
		var err error
		if key, err = decodeValue(vb, key); err != nil {
			return nil, err
		}
	}
	return key, nil
}
