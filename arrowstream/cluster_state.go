package arrowstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// State that moves between instances (docs/cluster.md): the downstream
// stage of a repartition hop keeps the state of the keys of the hop
// partitions it owns, and a hop partition that changes owner takes its
// state along through a changelog topic. The source of the hop does the
// Kafka side (StateMover); the session gives it the stage's state
// provider to wrap, makes the stage's state partitions those of the hop,
// and restarts the stage's epoch when partitions move under it.

// StateMover is a hop's downstream source that moves the stage's state
// between instances: it wraps the stage's state provider (the stores
// record their changes for the changelog, and a partition that moved
// here starts from the changelog's state).
type StateMover interface {
	WrapStateProvider(checkpoint.StateStoreProvider) checkpoint.StateStoreProvider
}

// movingStage prepares the downstream stage dn of cut for state that
// moves: its state partitions hash the key columns the hop hashes, so
// that state partition p is hop partition p; its source wraps its state
// provider; and an epoch that fails because partitions moved under it
// (or any other failure) runs again from the checkpoint.
func movingStage(dn *DataStreamWriter, cut hopCut) error {
	if !cut.agg && len(cut.hashed) != len(cut.keys) {
		return fmt.Errorf("the deduplication's keys must all reach the hop unchanged")
	}
	if cut.agg {
		pos := make([]string, len(cut.hashed))
		for i, p := range cut.hashed {
			pos[i] = strconv.Itoa(p)
		}
		dn.stageConf = map[string]string{stream.ConfClusterStatePartitionKeys: strings.Join(pos, ",")}
	}
	var mover StateMover
	dn.wrapState = func(p checkpoint.StateStoreProvider) checkpoint.StateStoreProvider {
		if mover == nil {
			return p
		}
		return mover.WrapStateProvider(p)
	}
	dn.bindMover = func(sources []Source) error {
		for _, src := range sources {
			if m, ok := src.(StateMover); ok {
				mover = m
				return nil
			}
		}
		return fmt.Errorf("the repartition hop's source does not move state between instances")
	}
	opts := map[string]string{}
	for k, v := range dn.opts {
		opts[k] = v
	}
	// Partitions that move under a running stage fail its epoch once
	// (the operators then rebuild their state from the moved one): the
	// stage restarts from its checkpoint for that.
	hopStageRestarts(opts)
	dn.opts = opts
	return nil
}

// hopStageRestarts gives a stage of a repartition hop the "on-failure"
// restart policy (20 attempts, 200 ms backoff) unless the query sets its
// own: an epoch failed by the cluster (a rebalance moving state under the
// downstream; a writer's transaction fenced by the broker, upstream or
// downstream) runs again from the stage's checkpoint, where Kafka's
// committed offsets say what was written, instead of stopping the table.
func hopStageRestarts(opts map[string]string) {
	if _, err := engine.RestartOptions(opts, false); err == nil && !hasOption(opts, stream.OptRestartPolicy) {
		opts[stream.OptRestartPolicy] = "on-failure"
		opts[stream.OptRestartMaxAttempts] = "20"
		opts[stream.OptRestartBackoff] = "200ms"
	}
}

func hasOption(opts map[string]string, key string) bool {
	for k := range opts {
		if strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

// stateProviderFunc is the session's state provider, wrapped for a stage
// whose state moves.
func (w *DataStreamWriter) stateProviderFunc(s *Session) engine.StateProviderFunc {
	if w.wrapState == nil {
		return s.stateProvider
	}
	return func(conf map[string]string, cw *checkpoint.Writer) (checkpoint.StateStoreProvider, error) {
		p, err := s.stateProvider(conf, cw)
		if err != nil {
			return nil, err
		}
		return w.wrapState(p), nil
	}
}

// hopPartitionsFile records, in a stateful cluster query's checkpoint,
// the number of partitions of its hop (and of its state).
const hopPartitionsFile = "hop-partitions"

// hopPartitionsRecorded returns the recorded count ("" when none).
func hopPartitionsRecorded(dir string) (string, error) {
	b, err := checkpoint.ReadSealedFile(filepath.Join(dir, hopPartitionsFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("the repartition hop's partition count: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func recordHopPartitions(dir string, n int) error {
	w := &checkpoint.Writer{}
	if err := w.MkdirAll(dir); err != nil {
		return err
	}
	if err := w.WriteSealedFile(filepath.Join(dir, hopPartitionsFile), []byte(strconv.Itoa(n)), false); err != nil && !errors.Is(err, checkpoint.ErrExists) {
		return fmt.Errorf("record the repartition hop's partition count: %w", err)
	}
	return nil
}
