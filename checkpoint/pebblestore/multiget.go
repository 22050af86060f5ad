package pebblestore

import (
	"bytes"
	"slices"
)

// GetMany implements checkpoint.MultiGetter: the keys are visited in
// ascending order with one iterator over the epoch's batch and the
// partition's version, each an exact-prefix seek (the Bloom filters answer
// most absent keys without reading data blocks, and the iterator reuses
// its position between neighbouring keys). Like Get, it remembers which
// keys are live, so that the Put that follows does not look them up again.
func (s *store) GetMany(keys [][]byte, fn func(i int, value []byte)) error {
	if len(keys) == 0 {
		return nil
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return bytes.Compare(keys[a], keys[b]) })
	it, err := s.batch.NewIter(nil)
	if err != nil {
		return s.fail("multi-get from", keys[order[0]], err)
	}
	var readErr error
	for _, i := range order {
		k := keys[i]
		found := it.SeekPrefixGE(k) && bytes.Equal(it.Key(), k)
		if found {
			v, err := it.ValueAndErr()
			if err != nil {
				readErr = s.fail("multi-get", k, err)
				break
			}
			fn(int(i), v)
		}
		s.exists[string(k)] = found
	}
	if err := it.Close(); err != nil && readErr == nil {
		readErr = s.fail("multi-get", nil, err)
	}
	return readErr
}
