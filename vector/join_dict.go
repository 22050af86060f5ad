package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// joinDictCache holds the build matches of every entry of the last
// dictionary a dictionary-encoded probe key brought: a batch whose key uses
// the same dictionary (streaming sources and static tables usually keep
// one) costs one gather per row instead of encoding, hashing and comparing
// the key's value.
type joinDictCache struct {
	dict   arrow.Array // retained; nil when empty
	a, n   []int32     // per dictionary entry: the slot's a and n
	oneAll bool        // every entry has exactly one match
}

func (c *joinDictCache) release() {
	if c.dict != nil {
		c.dict.Release()
		c.dict = nil
	}
}

// lookupDictionary looks up a single dictionary-encoded key by dictionary
// entry: each entry is probed once per dictionary, and each row takes its
// entry's matches. It reports false, having done nothing, when the batch is
// left to the general path (null indices, null-safe keys, or a dictionary
// much larger than the batch).
func (j *HashJoin) lookupDictionary(d *array.Dictionary) (bool, error) {
	dict := d.Dictionary()
	c := &j.probeDict
	if j.anyNullSafe || d.NullN() != 0 || (c.dict == nil || c.dict.Data() != dict.Data()) && dict.Len() > max(1024, d.Len()) {
		return false, nil
	}
	if c.dict == nil || c.dict.Data() != dict.Data() {
		enc := j.probeEnc
		if err := enc.Encode([]arrow.Array{dict}); err != nil {
			return false, err
		}
		m := dict.Len()
		c.a, c.n = grow(c.a, m), grow(c.n, m)
		c.oneAll = j.probeEncoded(enc, c.a, c.n)
		for e := range m {
			// A null dictionary value never matches (not null-safe here).
			if enc.HasNull(e) {
				c.n[e], c.oneAll = 0, false
			}
		}
		c.release()
		dict.Retain()
		c.dict = dict
	}
	var err error
	switch ix := d.Indices().(type) {
	case *array.Int8:
		j.allOne, err = mapJoinDictionary(c, ix.Int8Values(), j.matchA, j.matchN)
	case *array.Int16:
		j.allOne, err = mapJoinDictionary(c, ix.Int16Values(), j.matchA, j.matchN)
	case *array.Int32:
		j.allOne, err = mapJoinDictionary(c, ix.Int32Values(), j.matchA, j.matchN)
	case *array.Int64:
		j.allOne, err = mapJoinDictionary(c, ix.Int64Values(), j.matchA, j.matchN)
	case *array.Uint8:
		j.allOne, err = mapJoinDictionary(c, ix.Uint8Values(), j.matchA, j.matchN)
	case *array.Uint16:
		j.allOne, err = mapJoinDictionary(c, ix.Uint16Values(), j.matchA, j.matchN)
	case *array.Uint32:
		j.allOne, err = mapJoinDictionary(c, ix.Uint32Values(), j.matchA, j.matchN)
	default:
		return false, nil
	}
	return true, err
}

// mapJoinDictionary gives every row its dictionary entry's matches and
// reports whether every row has exactly one.
func mapJoinDictionary[T dictIndex](c *joinDictCache, idx []T, outA, outN []int32) (bool, error) {
	da, dn := c.a, c.n
	outA, outN = outA[:len(idx)], outN[:len(idx)]
	notOne := int32(0)
	for i, x := range idx {
		if uint64(x) >= uint64(len(dn)) {
			return false, fmt.Errorf("vector: join: dictionary index %d out of range (dictionary of %d entries): %w", x, len(dn), ErrType)
		}
		outA[i], outN[i] = da[x], dn[x]
		notOne |= dn[x] ^ 1
	}
	return notOne == 0, nil
}
