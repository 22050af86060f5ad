package stateful

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// A cluster's repartition hop hashes the key columns that reach it
// unchanged (not a window computed after it); state partition p must hold
// exactly the keys of hop partition p so that it can move between
// instances with it. stream.ConfClusterStatePartitionKeys names the key
// positions the hop hashes, and the codec's Spark hash takes only those.

// hashOnlyFrom restricts the codec's partitioning hash to the key
// positions the conf lists (ConfClusterStatePartitionKeys); without the
// setting the hash takes every key column.
func (c *rowCodec) hashOnlyFrom(conf map[string]string) error {
	v, ok := conf[stream.ConfClusterStatePartitionKeys]
	if !ok {
		return nil
	}
	keys, err := parseKeyPositions(v, len(c.cols))
	if err != nil {
		return err
	}
	if slices.Equal(keys, c.hashKeys) && c.hashKeys != nil {
		return nil
	}
	for _, k := range keys {
		if !vector.HashRowsSupported(c.schema.Field(k).Type) {
			return fmt.Errorf("arrowstream: %s: key column %s of type %s cannot be hashed", stream.ConfClusterStatePartitionKeys, c.schema.Field(k).Name, vector.TypeName(c.schema.Field(k).Type))
		}
	}
	c.hashKeys, c.sparkHashable, c.sparkDone = keys, true, false
	return nil
}

// parseKeyPositions parses "0,2" (empty: none) as positions below n.
func parseKeyPositions(v string, n int) ([]int, error) {
	keys := []int{}
	if strings.TrimSpace(v) == "" {
		return keys, nil
	}
	for _, f := range strings.Split(v, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 0 || k >= n {
			return nil, fmt.Errorf("arrowstream: %s = %q: %q is not a key position below %d", stream.ConfClusterStatePartitionKeys, v, f, n)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// hashed returns the columns of the last encode the hash takes.
func (c *rowCodec) hashed() []arrow.Array {
	if c.hashKeys == nil {
		return c.last
	}
	out := make([]arrow.Array, len(c.hashKeys))
	for i, k := range c.hashKeys {
		out[i] = c.last[k]
	}
	return out
}
