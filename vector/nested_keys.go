package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// elemKeys gives the elements of a column comparable keys, for the
// collection functions that test elements for equality (array_contains,
// array_distinct, map lookups, ...). Equality is Spark's for these
// functions: -0.0 equals 0.0 and NaN equals NaN. Types the KeyEncoder
// takes use it (a word per element for fixed-width types, normalized
// bytes otherwise); FLOAT and nested element types (arrays of arrays,
// maps) fall back to a rendering of each value, which is slower but exact.
type elemKeys struct {
	enc  *KeyEncoder
	arr  arrow.Array
	slow []string // fallback keys
}

func newElemKeys(mem memory.Allocator, dt arrow.DataType) (*elemKeys, error) {
	dt = Unwrap(dt)
	k := &elemKeys{}
	if checkKeyType(dt) != nil {
		return k, nil
	}
	enc, err := NewKeyEncoder(mem, []arrow.DataType{dt})
	if err != nil {
		return nil, fmt.Errorf("vector: element keys of %s: %w", TypeName(dt), err)
	}
	k.enc = enc
	return k, nil
}

// encode computes the keys of arr's elements (arr is borrowed until the
// next encode).
func (k *elemKeys) encode(arr arrow.Array) error {
	k.arr = arr
	if k.enc != nil {
		return k.enc.Encode([]arrow.Array{arr})
	}
	k.slow = k.slow[:0]
	for i := 0; i < arr.Len(); i++ {
		k.slow = append(k.slow, slowKey(ValueAt(arr, i)))
	}
	return nil
}

// slowKey renders a canonical value so that equal values, with Spark's
// float equality, render alike.
func slowKey(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) {
			return "f:NaN"
		}
		if x == 0 {
			x = 0
		}
		return fmt.Sprintf("f:%v", math.Float64bits(x))
	case []any:
		s := "["
		for _, e := range x {
			s += slowKey(e) + ","
		}
		return s + "]"
	case MapValue:
		s := "{"
		for i := range x.Keys {
			s += slowKey(x.Keys[i]) + ":" + slowKey(x.Values[i]) + ","
		}
		return s + "}"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func (k *elemKeys) null(i int) bool { return k.arr.IsNull(i) }

// equal reports whether element i of k equals element j of o (both
// non-null, encoded with the same type).
func (k *elemKeys) equal(i int, o *elemKeys, j int) bool {
	switch {
	case k.enc == nil:
		return k.slow[i] == o.slow[j]
	case k.enc.IsFixed():
		return k.enc.Fixed()[i] == o.enc.Fixed()[j]
	}
	return string(k.enc.Key(i)) == string(o.enc.Key(j))
}

// elemSet is a set of the elements of one elemKeys, reset per row.
type elemSet struct {
	k     *elemKeys
	words map[uint64]struct{}
	strs  map[string]struct{}
	null  bool
}

func newElemSet(k *elemKeys) *elemSet {
	return &elemSet{k: k, words: map[uint64]struct{}{}, strs: map[string]struct{}{}}
}

func (s *elemSet) reset() {
	clear(s.words)
	clear(s.strs)
	s.null = false
}

// add inserts element i and reports whether it was new (NULL is one
// value).
func (s *elemSet) add(i int) bool {
	if s.k.null(i) {
		if s.null {
			return false
		}
		s.null = true
		return true
	}
	switch {
	case s.k.enc == nil:
		if _, ok := s.strs[s.k.slow[i]]; ok {
			return false
		}
		s.strs[s.k.slow[i]] = struct{}{}
	case s.k.enc.IsFixed():
		w := s.k.enc.Fixed()[i]
		if _, ok := s.words[w]; ok {
			return false
		}
		s.words[w] = struct{}{}
	default:
		key := s.k.enc.Key(i)
		if _, ok := s.strs[string(key)]; ok {
			return false
		}
		s.strs[string(key)] = struct{}{}
	}
	return true
}

// has reports whether element j of o (non-null, same type) is in the set.
func (s *elemSet) has(o *elemKeys, j int) bool {
	switch {
	case s.k.enc == nil:
		_, ok := s.strs[o.slow[j]]
		return ok
	case s.k.enc.IsFixed():
		_, ok := s.words[o.enc.Fixed()[j]]
		return ok
	}
	_, ok := s.strs[string(o.enc.Key(j))]
	return ok
}
