package checkpoint

import "fmt"

// MultiGetter is a StateStore that reads many keys in one pass (one
// iterator over sorted keys instead of a lookup per key): an operator
// whose state lives mostly in the store reads back the groups an epoch
// touches with one call per partition.
type MultiGetter interface {
	// GetMany calls fn(i, value) for every keys[i] that is live, in no
	// particular order; value is valid only during the call. Keys absent
	// from the store are skipped. The error is the store's failure to read.
	GetMany(keys [][]byte, fn func(i int, value []byte)) error
}

// GetMany reads keys from st: in one pass when st is a MultiGetter, else
// key by key with Get.
func GetMany(st StateStore, keys [][]byte, fn func(i int, value []byte)) error {
	if mg, ok := st.(MultiGetter); ok {
		return mg.GetMany(keys, fn)
	}
	for i, k := range keys {
		v, ok, err := st.Get(k)
		if err != nil {
			return fmt.Errorf("checkpoint: read key %d of %d: %w", i, len(keys), err)
		}
		if ok {
			fn(i, v)
		}
	}
	return nil
}
