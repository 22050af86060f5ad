package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// WorkerEnvVar carries a worker's configuration (JSON) from the harness to
// the re-executed child; MaybeRunWorker looks for it.
const WorkerEnvVar = "ARROWSTREAM_CHAOS_WORKER"

// NoKill disarms the write-step kill.
const NoKill = checkpoint.WriteStep(-1)

// WorkerConfig is one child process's task.
type WorkerConfig struct {
	Workload string `json:"workload"`
	Records  int64  `json:"records"`
	// Dir is the workload's directory (kept across restarts).
	Dir string `json:"dir"`
	// KillStep arms the checkpoint write hook: the process kills itself
	// with SIGKILL at this step of its KillAfter-th write reaching it
	// (counting from 0). NoKill disarms it.
	KillStep  checkpoint.WriteStep `json:"killStep"`
	KillAfter int64                `json:"killAfter"`
	// KillKinds, when set, limits the writes the hook counts to files of
	// these kinds (fileKind), so that a test can aim its kills at them.
	KillKinds []string `json:"killKinds,omitempty"`
	// Finish: when every output is complete, write the result to
	// <Dir>/result.json and exit 0. Without it the worker runs until it is
	// killed.
	Finish bool `json:"finish"`
	// FinishTimeout is how long a finishing run may show no progress (no
	// file under Dir written, grown or added) before it gives up; the
	// result is written anyway then, so that what is missing is counted.
	// A slow run that keeps moving is never cut short.
	FinishTimeout time.Duration `json:"finishTimeout"`
	NoSync        bool          `json:"noSync"`
	// Params are the workload's Prepare results.
	Params map[string]string `json:"params,omitempty"`
	// Conf is added to the workload's session conf.
	Conf map[string]string `json:"conf,omitempty"`
}

// workerStarted is the line a worker writes to its standard output once
// its process is initialized, before it starts the workload.
const workerStarted = "chaos worker started"

// killLog is the file, under Dir, where a worker notes the write it is
// about to die in (step and path, one line per kill).
const killLog = "kills.log"

// resultFile is where a finishing worker writes its result.
const resultFile = "result.json"

// MaybeRunWorker runs the worker and exits the process when WorkerEnvVar is
// set; otherwise it returns at once. Call it first thing in main or
// TestMain of a binary the harness re-executes.
func MaybeRunWorker() {
	text := os.Getenv(WorkerEnvVar)
	if text == "" {
		return
	}
	var cfg WorkerConfig
	if err := json.Unmarshal([]byte(text), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "chaos worker: bad %s: %v\n", WorkerEnvVar, err)
		os.Exit(2)
	}
	// Tell the harness that the process is past its initialization: its
	// timer counts from here (killCycle), so that timer kills land in
	// recovery and epochs, not in the Go runtime's start-up.
	fmt.Fprintln(os.Stdout, workerStarted)
	if err := RunWorker(context.Background(), cfg, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "chaos worker: %v\n", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// killHook returns the fault hook of cfg: it counts the writes reaching
// cfg.KillStep and, at the KillAfter-th, notes the write in the kill log
// and sends SIGKILL to its own process, so that the kill lands exactly at
// that step.
func killHook(cfg WorkerConfig) checkpoint.FaultHook {
	if cfg.KillStep == NoKill {
		return nil
	}
	var seen atomic.Int64
	logPath := filepath.Join(cfg.Dir, killLog)
	return func(step checkpoint.WriteStep, path string) error {
		if step != cfg.KillStep || len(cfg.KillKinds) > 0 && !slices.Contains(cfg.KillKinds, fileKind(cfg.Dir, path)) {
			return nil
		}
		if seen.Add(1)-1 != cfg.KillAfter {
			return nil
		}
		if f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
			fmt.Fprintf(f, "%d\t%s\n", int(step), path)
			f.Close()
		}
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL cannot be caught; never continue the write
	}
}

// RunWorker runs cfg's workload from its checkpoints until it is killed,
// or, with cfg.Finish, until its outputs are complete.
func RunWorker(ctx context.Context, cfg WorkerConfig, stderr io.Writer) error {
	wl, err := NewWorkload(cfg.Workload, cfg.Records)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	run, err := wl.Start(ctx, Env{
		Dir: cfg.Dir, Hook: killHook(cfg), NoSync: cfg.NoSync,
		Allocator: memory.NewGoAllocator(), Logger: logger, Params: cfg.Params, Conf: cfg.Conf,
	})
	if err != nil {
		return err
	}
	defer run.Stop()
	stall := newStallWatch(treeSize(cfg.Dir), cfg.FinishTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if cfg.Finish && cfg.FinishTimeout > 0 && stall.stalled() {
			fmt.Fprintf(stderr, "chaos worker: outputs incomplete and no progress for %s; writing what there is\n", cfg.FinishTimeout)
			return finish(run, cfg)
		}
		done, err := run.Done()
		if err != nil {
			return err
		}
		if done && cfg.Finish {
			return finish(run, cfg)
		}
	}
}

func finish(run Running, cfg WorkerConfig) error {
	res, err := run.Result()
	if err != nil {
		return err
	}
	return writeResult(filepath.Join(cfg.Dir, resultFile), res)
}
