package arrowstream

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// statePartitions are the state stores of one stateful operator:
// state/<opID>/<partition> in the checkpoint, one store per partition,
// rows routed by their key's stable hash. Every partition is opened and
// committed every epoch (Spark: each task commits, even with no updates).
type statePartitions struct {
	opID   int
	writer *checkpoint.Writer
	opts   checkpoint.StoreOptions

	parts  []*checkpoint.StorePartition
	stores []checkpoint.StateStore // open for the current epoch
}

// open opens every partition at version ep.ID.
func (s *statePartitions) open(ep EpochInfo) error {
	n := max(ep.NumPartitions, 1)
	if len(s.parts) != n {
		s.parts = make([]*checkpoint.StorePartition, n)
		for p := range s.parts {
			dir := filepath.Join(ep.CheckpointDir, "state", strconv.Itoa(s.opID), strconv.Itoa(p))
			part, err := checkpoint.OpenStorePartition(dir, s.writer, s.opts)
			if err != nil {
				return err
			}
			s.parts[p] = part
		}
	}
	s.stores = make([]checkpoint.StateStore, n)
	for p, part := range s.parts {
		st, err := part.Begin(ep.ID)
		if err != nil {
			s.abort()
			return err
		}
		s.stores[p] = st
	}
	return nil
}

// store returns the store that owns a key hash.
func (s *statePartitions) store(hash uint64) checkpoint.StateStore {
	return s.stores[hash%uint64(len(s.stores))]
}

// abort discards the epoch's updates of every partition.
func (s *statePartitions) abort() {
	for _, st := range s.stores {
		if st != nil {
			st.Abort()
		}
	}
	s.stores = nil
}

// commit commits every partition (version ep.ID+1) and fills the progress
// fields that describe the stores.
func (s *statePartitions) commit(ctx context.Context, progress *StateOperatorProgress) error {
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
	progress.NumRowsTotal = total
	progress.CommitTimeMs = time.Since(start).Milliseconds()
	progress.NumShufflePartitions = int64(len(s.parts))
	progress.NumStateStoreInstances = int64(len(s.parts))
	return nil
}

// rangeAll visits every live row of every open store.
func (s *statePartitions) rangeAll(fn func(key, value []byte) bool) {
	for _, st := range s.stores {
		cont := true
		st.Range(func(k, v []byte) bool {
			cont = fn(k, v)
			return cont
		})
		if !cont {
			return
		}
	}
}
