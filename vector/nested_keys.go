package vector

import (
	"context"
	"fmt"
	"hash/maphash"
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

// elemSet is a set of elements of one elemKeys, kept as their indices in
// an open-addressing table (linear probing) and emptied per row. The
// caller sizes it before a row from the row's element count (prepare),
// so it does not grow inside a row: the Go maps it replaces grew by
// rehashes that no context check could interrupt (75–116 ms of CPU on a
// row of 20M elements), their heap was counted by no limit, and emptying
// them cost their whole capacity on every later row. The table is taken
// interruptibly (makeContext) after its bytes are reserved on the
// query's account; emptying touches only the slots the row filled.
type elemSet struct {
	k     *elemKeys
	seed  maphash.Seed
	slots []int32 // 1 + an element's index in k; 0 is an empty slot
	used  []int32 // the slots filled since the set was emptied
	mask  uint64
	null  bool
	acct  heapAccount
}

// newElemSet returns an empty set over k's elements whose table is
// reserved on mem's account (named what in a limit error).
func newElemSet(k *elemKeys, mem memory.Allocator, what string) *elemSet {
	return &elemSet{k: k, seed: maphash.MakeSeed(), acct: newHeapAccount(mem, what)}
}

// release returns the set's reservation.
func (s *elemSet) release() {
	s.slots, s.used = nil, nil
	s.acct.release()
}

// prepare empties the set and makes room for n more elements without
// growth. It checks ctx while it empties or makes a large table.
func (s *elemSet) prepare(ctx context.Context, n int) error {
	for lo := 0; lo < len(s.used); lo += cancelCheckRows {
		if lo > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for _, p := range s.used[lo:min(lo+cancelCheckRows, len(s.used))] {
			s.slots[p] = 0
		}
	}
	s.used = s.used[:0]
	s.null = false
	size := 8
	for size < 2*n {
		size <<= 1
	}
	if size <= len(s.slots) {
		return nil
	}
	return s.resize(ctx, size)
}

// resize makes an empty table of size slots (a power of two), room for
// size/2 elements.
func (s *elemSet) resize(ctx context.Context, size int) error {
	s.slots, s.used = nil, nil // what the reservation no longer covers
	if err := s.acct.set(int64(size)*4 + int64(size/2)*4); err != nil {
		s.acct.release()
		return err
	}
	slots, err := makeContext[int32](ctx, 0, size)
	if err != nil {
		return err
	}
	used, err := makeContext[int32](ctx, 0, size/2)
	if err != nil {
		return err
	}
	s.slots, s.used, s.mask = slots[:size], used, uint64(size-1)
	return nil
}

// hash is the hash of element i of o (o encoded as s.k).
func (s *elemSet) hash(o *elemKeys, i int) uint64 {
	switch {
	case o.enc == nil:
		return maphash.String(s.seed, o.slow[i])
	case o.enc.IsFixed():
		return fmix64(o.enc.Fixed()[i])
	}
	return maphash.Bytes(s.seed, o.enc.Key(i))
}

// add inserts element i and reports whether it was new (NULL is one
// value). The set holds at most what prepare made room for; past that it
// grows by a rehash (a caller's undercount, never the common path).
func (s *elemSet) add(i int) bool {
	if s.k.null(i) {
		if s.null {
			return false
		}
		s.null = true
		return true
	}
	if 2*(len(s.used)+1) > len(s.slots) {
		s.rehash()
	}
	h := s.hash(s.k, i) & s.mask
	for {
		v := s.slots[h]
		if v == 0 {
			s.slots[h] = int32(i + 1)
			s.used = append(s.used, int32(h))
			return true
		}
		if s.k.equal(int(v-1), s.k, i) {
			return false
		}
		h = (h + 1) & s.mask
	}
}

// rehash doubles the table, keeping its elements. Only an add past what
// prepare made room for gets here.
func (s *elemSet) rehash() {
	old := s.used
	oldSlots := s.slots
	size := max(8, 2*len(s.slots))
	// Refused, the reservation stays as it was: the growth goes uncounted
	// rather than failing a row halfway.
	_ = s.acct.set(int64(size)*4 + int64(size/2)*4)
	s.slots, s.used, s.mask = make([]int32, size), make([]int32, 0, size/2), uint64(size-1)
	for _, p := range old {
		e := oldSlots[p]
		h := s.hash(s.k, int(e-1)) & s.mask
		for s.slots[h] != 0 {
			h = (h + 1) & s.mask
		}
		s.slots[h] = e
		s.used = append(s.used, int32(h))
	}
}

// has reports whether element j of o (non-null, encoded as s.k) is in the
// set.
func (s *elemSet) has(o *elemKeys, j int) bool {
	if len(s.slots) == 0 {
		return false
	}
	h := s.hash(o, j) & s.mask
	for {
		v := s.slots[h]
		if v == 0 {
			return false
		}
		if s.k.equal(int(v-1), o, j) {
			return true
		}
		h = (h + 1) & s.mask
	}
}
