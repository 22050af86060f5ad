package stateful

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// statePartitions are the state stores of one stateful operator:
// state/<opID>/<partition> in the checkpoint, one store per partition,
// rows routed by their key's partition (partitioning.go). Every partition is opened and
// committed every epoch (Spark: each task commits, even with no updates).
type statePartitions struct {
	opID   int
	writer *checkpoint.Writer
	opts   checkpoint.StoreOptions
	// schema describes the operator's state (kind, key and value layout);
	// it is recorded in state/<op>/_metadata/schema and must match on
	// restart, so that a changed query is refused instead of misreading
	// old state.
	schema  string
	checked bool
	// scheme assigns keys to partitions (from the epoch's settings).
	scheme partitioning

	// provider opened parts: the query's (Epoch) or, for an operator
	// run without one, a memory provider of its own.
	provider checkpoint.StateStoreProvider
	parts    []checkpoint.StatePartition
	stores   []checkpoint.StateStore // open for the current epoch
}

// open opens every partition at version ep.ID.
func (s *statePartitions) open(ep Epoch) error {
	if !s.checked {
		if err := s.checkSchema(ep.CheckpointDir); err != nil {
			return err
		}
		s.checked = true
	}
	scheme, err := partitioningOf(ep.Conf)
	if err != nil {
		return err
	}
	s.scheme = scheme
	n := max(ep.NumPartitions, 1)
	provider := ep.Stores
	if provider == nil {
		if s.provider == nil || s.provider.Name() != "memory" {
			s.provider = checkpoint.NewMemoryProvider(s.writer, s.opts)
			s.parts = nil
		}
		provider = s.provider
	}
	if len(s.parts) != n || provider != s.provider {
		s.provider = provider
		s.parts = make([]checkpoint.StatePartition, n)
		for p := range s.parts {
			dir := filepath.Join(ep.CheckpointDir, "state", strconv.Itoa(s.opID), strconv.Itoa(p))
			part, err := provider.OpenPartition(dir)
			if err != nil {
				s.parts = nil
				return err
			}
			s.parts[p] = part
		}
	}
	s.stores = make([]checkpoint.StateStore, n)
	for p, part := range s.parts {
		st, err := part.Begin(ep.ID)
		if err != nil {
			s.Abort()
			return err
		}
		s.stores[p] = st
	}
	return nil
}

// storeOf returns the store that owns the key of row i of c's last
// encode.
func (s *statePartitions) storeOf(c *rowCodec, i int) checkpoint.StateStore {
	return s.stores[s.scheme.of(c, i, len(s.stores))]
}

// abort discards the epoch's updates of every partition.
func (s *statePartitions) Abort() {
	for _, st := range s.stores {
		if st != nil {
			st.Abort()
		}
	}
	s.stores = nil
}

// commit commits every partition (version ep.ID+1) and fills the progress
// fields that describe the stores.
func (s *statePartitions) Commit(ctx context.Context, progress *stream.StateOperatorProgress) error {
	start := time.Now()
	var total int64
	for p, st := range s.stores {
		total += int64(st.Len())
		if _, err := st.Commit(ctx); err != nil {
			for _, rest := range s.stores[p+1:] {
				rest.Abort()
			}
			s.stores = nil
			return fmt.Errorf("arrowstream: commit state of operator %d partition %d: %w", s.opID, p, err)
		}
	}
	s.stores = nil
	var bytes int64
	for _, part := range s.parts {
		bytes += part.MemoryBytes()
		for k, v := range part.Metrics() {
			if progress.CustomMetrics == nil {
				progress.CustomMetrics = map[string]int64{}
			}
			progress.CustomMetrics[k] += v
		}
	}
	if s.provider != nil {
		bytes += s.provider.MemoryBytes()
		for k, v := range s.provider.Metrics() {
			if progress.CustomMetrics == nil {
				progress.CustomMetrics = map[string]int64{}
			}
			progress.CustomMetrics[k] = v
		}
	}
	progress.NumRowsTotal = total
	progress.MemoryUsedBytes = bytes
	progress.CommitTimeMs = time.Since(start).Milliseconds()
	progress.NumShufflePartitions = int64(len(s.parts))
	progress.NumStateStoreInstances = int64(len(s.parts))
	return nil
}

// rangeAll visits every live row of every open store, in no particular
// order (eviction and full reads do not need key order, and sorting every
// key each epoch was a third of a windowed aggregation's time).
func (s *statePartitions) rangeAll(fn func(key, value []byte) bool) {
	for _, st := range s.stores {
		cont := true
		st.Scan(func(k, v []byte) bool {
			cont = fn(k, v)
			return cont
		})
		if !cont {
			return
		}
	}
}

// checkSchema records the state schema on first use and compares it on
// every later start.
func (s *statePartitions) checkSchema(checkpointDir string) error {
	dir := filepath.Join(checkpointDir, "state", strconv.Itoa(s.opID), "_metadata")
	path := filepath.Join(dir, "schema")
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if string(data) != s.schema {
			return fmt.Errorf("arrowstream: the state of stateful operator %d in %s was written by a different query: it holds %s, this query needs %s; start the changed query on a new checkpoint location", s.opID, path, data, s.schema)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("arrowstream: read %s: %w", path, err)
	}
	if err := s.writer.MkdirAll(dir); err != nil {
		return err
	}
	if err := s.writer.WriteFile(path, []byte(s.schema), false); err != nil && !errors.Is(err, checkpoint.ErrExists) {
		return err
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
