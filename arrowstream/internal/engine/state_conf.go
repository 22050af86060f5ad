package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
)

// keepStateTuning lets the current run's Pebble sizes and working
// directory win over the recorded ones: unlike the provider, they do not
// shape the state.
func keepStateTuning(conf, current map[string]string) {
	for _, k := range stream.StateTuningKeys() {
		if v, ok := current[k]; ok {
			conf[k] = v
		}
	}
}

// checkStateProvider compares the provider a restarted query asks for with
// the one its checkpoint was written with: state written by one provider
// cannot be read by the other, so a mismatch is refused instead of
// starting from empty state. recorded is the provider in the offset log
// (absent: an old checkpoint, memory); requested is empty when the query
// does not set one, and then the recorded one is used. hasState says that
// the checkpoint's metadata records stateful operators: their state may
// live in the epoch log alone, without a state directory.
func checkStateProvider(checkpointDir string, hasState bool, recorded, requested string) error {
	if recorded == "" {
		recorded = "memory"
	}
	if requested == "" || strings.EqualFold(recorded, requested) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(checkpointDir, "state")); err != nil && !hasState {
		return nil // no state: nothing to misread
	}
	return fmt.Errorf("arrowstream: the checkpoint %s holds state written by the %q state store provider but the query sets %s = %q; restart with %s = %q or start on a new checkpoint location",
		checkpointDir, recorded, stream.ConfStateStoreProvider, requested, stream.ConfStateStoreProvider, recorded)
}

// setStatePartitioning fixes the state partitioning scheme of a run in its
// conf (which the offset log records): a new query (restarted false) uses
// Spark's unless its settings name one; a checkpoint that does not record
// one was written before the setting existed and keeps the key-encoder
// scheme its state was partitioned with, whatever the session says.
func setStatePartitioning(conf, recorded map[string]string, restarted bool) {
	freezeSetting(conf, recorded, restarted, stream.ConfStatePartitioning, stream.PartitioningMurmur3, stream.PartitioningKeyEncoder)
}

// setSubplanSharing fixes in a run's conf (which the offset log records)
// whether stateful subplans read twice run once (shared_subplan.go): a
// new query shares unless its settings say "false"; a checkpoint that
// does not record the setting was written before it existed, with state
// for every copy, and keeps running every copy.
func setSubplanSharing(conf, recorded map[string]string, restarted bool) {
	freezeSetting(conf, recorded, restarted, stream.ConfShareStatefulSubplans, "true", "false")
}

// setJoinInputPruning fixes in a run's conf (which the offset log
// records) whether a stream-stream join's inputs are pruned to the
// columns read at or above the join: a new query prunes unless its
// settings say "false"; a checkpoint that does not record the setting
// was written before inputs were pruned, with the columns only filters
// below read in its join state, and keeps them.
func setJoinInputPruning(conf, recorded map[string]string, restarted bool) {
	freezeSetting(conf, recorded, restarted, stream.ConfPruneStreamJoinInputs, "true", "false")
}

// PlanOptions returns the optimizer's options for a query with settings
// conf over the checkpoint in dir: what the newest offset record fixes
// (as the micro-batch engine will resolve it when it starts), or a new
// query's defaults when the checkpoint has none. The plan is made before
// the engine reads its logs, so they are read here too.
func PlanOptions(dir string, w *checkpoint.Writer, conf map[string]string) (plan.OptimizeOptions, error) {
	resolved := copyConf(conf)
	recorded, restarted, err := recordedConf(dir, w)
	if err != nil {
		return plan.OptimizeOptions{}, err
	}
	for k, v := range recorded {
		resolved[k] = v
	}
	setJoinInputPruning(resolved, recorded, restarted)
	keep := strings.EqualFold(strings.TrimSpace(resolved[stream.ConfPruneStreamJoinInputs]), "false")
	return plan.OptimizeOptions{KeepStreamJoinInputColumns: keep}, nil
}

// recordedConf returns the settings of the newest offset record of the
// checkpoint in dir, and false when there is none (a new query).
func recordedConf(dir string, w *checkpoint.Writer) (map[string]string, bool, error) {
	if dir == "" {
		return nil, false, nil
	}
	if ok, err := checkpoint.HasEpochLog(dir); err != nil || !ok {
		return nil, false, err
	}
	offsets, commits, err := checkpoint.OpenEpochLogs(dir, w)
	if err != nil {
		return nil, false, fmt.Errorf("arrowstream: read the offset log of %s: %w", dir, err)
	}
	defer commits.Close()
	_, seq, ok, err := offsets.Latest()
	if err != nil {
		return nil, false, fmt.Errorf("arrowstream: read the offset log of %s: %w", dir, err)
	}
	return seq.Conf, ok, nil
}

// freezeSetting fixes key in a run's conf (which the offset log records):
// a new query takes fresh unless its settings name a value; a restarted
// query whose checkpoint does not record key was written before the
// setting existed and takes before, the behaviour it was written with.
func freezeSetting(conf, recorded map[string]string, restarted bool, key, fresh, before string) {
	if !restarted {
		if conf[key] == "" {
			conf[key] = fresh
		}
		return
	}
	if recorded[key] == "" {
		conf[key] = before
	}
}
