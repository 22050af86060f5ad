package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// ErrConnectorMissing is returned by NewWorkload for a workload whose
// connector is not part of this build.
var ErrConnectorMissing = errors.New("connector not available in this build")

// Env is what a workload gets in the worker process.
type Env struct {
	// Dir is the workload's own directory: checkpoints and any data files
	// live under it and survive restarts.
	Dir string
	// Hook must be used for every checkpoint write (session and sinks), so
	// that the harness can kill the process inside writes.
	Hook checkpoint.FaultHook
	// NoSync skips fsync (a killed process loses nothing the kernel has).
	NoSync bool
	// Allocator for query data.
	Allocator memory.Allocator
	// Logger for the engine's logs.
	Logger *slog.Logger
	// Params are what the workload's Prepare returned (see Preparer).
	Params map[string]string
	// Conf is added to every session's conf (`arrowstream chaos --conf`,
	// e.g. stateStore.provider=pebble).
	Conf map[string]string
}

// Preparer is a Workload that needs something to outlive the killed
// workers (a Kafka cluster): Prepare runs once in the harness process
// before any worker; its parameters reach every worker's Env.Params, and
// cleanup runs when the harness is done.
type Preparer interface {
	Prepare(ctx context.Context) (params map[string]string, cleanup func(), err error)
}

// Workload is a checkpointed streaming job over a deterministic input of
// Records() records: started afresh in every worker process, it resumes
// from its checkpoints.
type Workload interface {
	// Name is the workload's name (--workload).
	Name() string
	// Records is the number of input records.
	Records() int64
	// Start starts the workload's queries.
	Start(ctx context.Context, env Env) (Running, error)
}

// Running is a started workload.
type Running interface {
	// Done reports whether every output has accounted for every input
	// record (or more: duplicates end the run too); an error means a
	// query failed (a restart that cannot recover, for instance).
	Done() (bool, error)
	// Result reads the outputs.
	Result() (Result, error)
	// Stop stops the queries and releases what they hold.
	Stop() error
}

// WorkloadNames lists the workloads --workload accepts.
func WorkloadNames() []string { return []string{"memsink", "continuous", "files", "kafka", "stateful"} }

// NewWorkload returns the named workload over records input records.
func NewWorkload(name string, records int64) (Workload, error) {
	if records <= 0 {
		return nil, fmt.Errorf("chaos: records must be positive, got %d", records)
	}
	switch strings.ToLower(name) {
	case "memsink":
		return newMemsinkWorkload(records), nil
	case "continuous":
		w := newMemsinkWorkload(records)
		w.continuous = true
		return w, nil
	case "files":
		return newFilesWorkload(records), nil
	case "kafka":
		return &kafkaWorkload{records: records}, nil
	case "stateful":
		return newStatefulWorkload(records), nil
	}
	return nil, fmt.Errorf("chaos: unknown workload %q (known: %s)", name, strings.Join(WorkloadNames(), ", "))
}

// sessionConf is a workload's own settings with the harness's --conf
// entries over them.
func sessionConf(harness, own map[string]string) map[string]string {
	out := make(map[string]string, len(own)+len(harness))
	for k, v := range own {
		out[k] = v
	}
	for k, v := range harness {
		out[k] = v
	}
	return out
}
