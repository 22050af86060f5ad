package stateful

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// statePartitions are an operator's view of its state for the epoch it
// runs: state/<opID>/<partition> in the checkpoint, one store per
// partition, rows routed by their key's partition (partitioning.go). The
// operator declares the state (decl) and the engine opens, commits and
// aborts the stores (every partition every epoch, as each Spark task
// commits even with no updates); the operator only reads and writes them
// between bind and the end of Execute.
type statePartitions struct {
	opID int
	// schema describes the operator's state (kind, key and value layout);
	// the engine records it in state/<op>/_metadata/schema and compares it
	// on restart, so that a changed query is refused instead of misreading
	// old state.
	schema string
	// global: one partition whatever the query's shuffle partitions.
	global bool
	// scheme assigns keys to partitions (from the epoch's settings).
	scheme partitioning

	stores []checkpoint.StateStore // open for the current epoch
}

// decl is the declaration of the state.
func (s *statePartitions) decl() StateDecl {
	return StateDecl{OpID: s.opID, Schema: s.schema, Global: s.global}
}

// bind takes the stores the engine opened for the epoch.
func (s *statePartitions) bind(ep Epoch) error {
	if len(ep.State) == 0 {
		return fmt.Errorf("arrowstream: stateful operator %d: the engine opened no state for epoch %d", s.opID, ep.ID)
	}
	if s.global && len(ep.State) != 1 {
		return fmt.Errorf("arrowstream: stateful operator %d: global state needs one partition, the engine opened %d", s.opID, len(ep.State))
	}
	scheme, err := partitioningOf(ep.Conf)
	if err != nil {
		return err
	}
	s.scheme = scheme
	s.stores = ep.State
	return nil
}

// storeOf returns the store that owns the key of row i of c's last
// encode.
func (s *statePartitions) storeOf(c *rowCodec, i int) checkpoint.StateStore {
	return s.stores[s.scheme.of(c, i, len(s.stores))]
}

// release forgets the epoch's stores (the engine committed or aborted
// them).
func (s *statePartitions) release() { s.stores = nil }

// committed fills the progress fields that describe the stores after the
// engine committed them.
func (s *statePartitions) committed(progress *stream.StateOperatorProgress, c StateCommit) {
	s.stores = nil
	progress.NumRowsTotal = c.NumRowsTotal
	progress.MemoryUsedBytes = c.MemoryUsedBytes
	progress.CommitTimeMs = c.CommitTimeMs
	progress.NumShufflePartitions = c.Partitions
	progress.NumStateStoreInstances = c.Partitions
	for k, v := range c.CustomMetrics {
		if progress.CustomMetrics == nil {
			progress.CustomMetrics = map[string]int64{}
		}
		progress.CustomMetrics[k] += v
	}
}

// rangeAll visits every live row of every open store, in no particular
// order (eviction and full reads do not need key order, and sorting every
// key each epoch was a third of a windowed aggregation's time).
func (s *statePartitions) rangeAll(fn func(key, value []byte) bool) error {
	for p, st := range s.stores {
		cont := true
		err := st.Scan(func(k, v []byte) bool {
			cont = fn(k, v)
			return cont
		})
		if err != nil {
			return fmt.Errorf("arrowstream: read state of operator %d partition %d: %w", s.opID, p, err)
		}
		if !cont {
			return nil
		}
	}
	return nil
}

// describeState renders an operator's state layout for the schema file.
func describeState(kind string, key, value *arrow.Schema) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, part := range []struct {
		name   string
		schema *arrow.Schema
	}{{"key", key}, {"value", value}} {
		b.WriteString(" " + part.name + "<")
		if part.schema != nil {
			for i, f := range part.schema.Fields() {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(f.Name + ":" + vector.TypeName(f.Type))
			}
		}
		b.WriteString(">")
	}
	return b.String()
}
