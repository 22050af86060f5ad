package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// DecodeDictionary returns arr with dictionary encoding removed (owned by
// the caller). A non-dictionary array is returned retained as it is.
func DecodeDictionary(mem memory.Allocator, arr arrow.Array) (arrow.Array, error) {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		arr.Retain()
		return arr, nil
	}
	idx, err := DictionaryIndices(d)
	if err != nil {
		return nil, err
	}
	return Take(mem, d.Dictionary(), idx)
}

// DictionaryIndices returns the indices of d widened to int32, with -1 for
// the nulls of d (the convention Take follows).
func DictionaryIndices(d *array.Dictionary) ([]int32, error) {
	n := d.Len()
	out := make([]int32, n)
	switch ix := d.Indices().(type) {
	case *array.Int8:
		widen(out, ix.Int8Values())
	case *array.Int16:
		widen(out, ix.Int16Values())
	case *array.Int32:
		copy(out, ix.Int32Values())
	case *array.Int64:
		widen(out, ix.Int64Values())
	case *array.Uint8:
		widen(out, ix.Uint8Values())
	case *array.Uint16:
		widen(out, ix.Uint16Values())
	case *array.Uint32:
		widen(out, ix.Uint32Values())
	default:
		return nil, fmt.Errorf("vector: dictionary index type %s: %w", d.Indices().DataType(), ErrType)
	}
	// Indices under nulls may be garbage; mark them so gathers stay in
	// bounds and yield null.
	if d.NullN() > 0 {
		for i := range out {
			if d.IsNull(i) {
				out[i] = -1
			}
		}
	}
	return out, nil
}

func widen[T int8 | int16 | int64 | uint8 | uint16 | uint32](dst []int32, src []T) {
	for i, v := range src {
		dst[i] = int32(v)
	}
}

// plainEval wraps an evaluator of a dictionary type and decodes its output,
// for kernels that have no dictionary specialisation.
type plainEval struct {
	Evaluator
	mem memory.Allocator
}

// Plain returns ev, decoding dictionary output when ev produces a
// dictionary type.
func Plain(ev Evaluator, mem memory.Allocator) Evaluator {
	if _, ok := ev.DataType().(*arrow.DictionaryType); ok {
		return &plainEval{Evaluator: ev, mem: mem}
	}
	return ev
}

func (p *plainEval) DataType() arrow.DataType { return Unwrap(p.Evaluator.DataType()) }

func (p *plainEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	a, err := p.Evaluator.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return DecodeDictionary(p.mem, a)
}
