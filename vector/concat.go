package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Concatenate joins arrays of one type into a new array owned by the
// caller. It is array.Concatenate except for dictionary arrays whose
// dictionaries differ: arrow-go v17 unifies those but, when a part has
// nulls, zeroes the index bytes at the null's element position instead of
// its byte position, overwriting valid indices of earlier rows with 0 (the
// first dictionary value). Such arrays are concatenated here by unifying
// the dictionaries and transposing the indices directly.
func Concatenate(parts []arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	if len(parts) > 1 {
		if dt, ok := parts[0].DataType().(*arrow.DictionaryType); ok && needsUnify(parts) {
			return concatDictionaries(mem, dt, parts)
		}
	}
	return array.Concatenate(parts, mem)
}

// needsUnify says whether the parts' dictionaries are not all the same
// array (the case array.Concatenate gets wrong with nulls).
func needsUnify(parts []arrow.Array) bool {
	first := parts[0].(*array.Dictionary).Dictionary()
	for _, p := range parts[1:] {
		d := p.(*array.Dictionary).Dictionary()
		if d.Data() != first.Data() && !array.Equal(d, first) {
			return true
		}
	}
	return false
}

func concatDictionaries(mem memory.Allocator, dt *arrow.DictionaryType, parts []arrow.Array) (arrow.Array, error) {
	u, err := array.NewDictionaryUnifier(mem, dt.ValueType)
	if err != nil {
		return nil, fmt.Errorf("vector: concatenating %s: %w", TypeName(dt), err)
	}
	defer u.Release()
	n := 0
	maps := make([][]int32, len(parts))
	for i, p := range parts {
		d, ok := p.(*array.Dictionary)
		if !ok {
			return nil, fmt.Errorf("vector: concatenating %s with a %s part: %w", TypeName(dt), TypeName(p.DataType()), ErrType)
		}
		buf, err := u.UnifyAndTranspose(d.Dictionary())
		if err != nil {
			return nil, fmt.Errorf("vector: unifying dictionaries: %w", err)
		}
		maps[i] = append([]int32(nil), arrow.Int32Traits.CastFromBytes(buf.Bytes())[:d.Dictionary().Len()]...)
		buf.Release()
		n += d.Len()
	}
	dict, err := u.GetResultWithIndexType(dt.IndexType)
	if err != nil {
		return nil, fmt.Errorf("vector: unified dictionary: %w", err)
	}
	defer dict.Release()
	idx := make([]int32, 0, n)
	for i, p := range parts {
		ix, err := DictionaryIndices(p.(*array.Dictionary))
		if err != nil {
			return nil, err
		}
		for _, k := range ix {
			if k >= 0 {
				k = maps[i][k]
			}
			idx = append(idx, k)
		}
	}
	indices, err := buildIndices(mem, dt.IndexType, idx)
	if err != nil {
		return nil, err
	}
	defer indices.Release()
	return array.NewDictionaryArray(dt, indices, dict), nil
}

// buildIndices builds an index array of type it from idx (-1 is null).
func buildIndices(mem memory.Allocator, it arrow.DataType, idx []int32) (arrow.Array, error) {
	b := array.NewBuilder(mem, it)
	defer b.Release()
	b.Reserve(len(idx))
	for _, k := range idx {
		if k < 0 {
			b.AppendNull()
			continue
		}
		switch ib := b.(type) {
		case *array.Int8Builder:
			ib.Append(int8(k))
		case *array.Int16Builder:
			ib.Append(int16(k))
		case *array.Int32Builder:
			ib.Append(k)
		case *array.Int64Builder:
			ib.Append(int64(k))
		case *array.Uint8Builder:
			ib.Append(uint8(k))
		case *array.Uint16Builder:
			ib.Append(uint16(k))
		case *array.Uint32Builder:
			ib.Append(uint32(k))
		default:
			return nil, fmt.Errorf("vector: dictionary index type %s: %w", it, ErrType)
		}
	}
	return b.NewArray(), nil
}

// ConcatRecords returns one record, owned by the caller, holding the rows
// of recs (borrowed; all of schema) in order. A single record is returned
// itself, retained, not copied; no records give an empty record; several
// are copied column by column into arrays allocated from mem. The error
// names the column that failed.
func ConcatRecords(mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(recs))
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for c, f := range schema.Fields() {
		if len(recs) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, f.Type, 0)
			continue
		}
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		col, err := Concatenate(parts, mem)
		if err != nil {
			releaseArrays(cols[:c])
			return nil, fmt.Errorf("vector: concatenate column %s of %d records: %w", f.Name, len(recs), err)
		}
		cols[c] = col
	}
	out := array.NewRecord(schema, cols, rows)
	releaseArrays(cols)
	return out, nil
}
