package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/internal/chaos"
)

const chaosExamples = `  arrowstream chaos                                 # 200 kills over 100k records
  arrowstream chaos --cycles 20 --records 20000 --seed 7
`

// runChaos is `arrowstream chaos`: the crash harness (internal/chaos). It
// re-executes this binary as `arrowstream chaos --worker` for each child;
// --worker is hidden (the worker reads its task from the environment).
func runChaos(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--worker" {
		chaos.MaybeRunWorker() // exits
		fmt.Fprintf(stderr, "arrowstream chaos --worker: %s is not set\n", chaos.WorkerEnvVar)
		return 2
	}
	env := osEnv(stdout, stderr)
	fs := newFlagSet("chaos", "[--cycles N] [--records N] [--seed S] [--workload memsink|continuous|files|kafka|stateful] [--conf key=value]...", chaosExamples)
	cycles := fs.Int("cycles", 200, "kill-and-restart cycles before the final run")
	records := fs.Int64("records", 100_000, "input records")
	seed := fs.Int64("seed", 1, "seed of every kill choice")
	workload := newChoice("memsink", chaos.WorkloadNames()...)
	fs.Var(workload, "workload", "workload: "+strings.Join(chaos.WorkloadNames(), ", "))
	dir := fs.String("dir", "", "working directory (default: a temporary one, deleted afterwards)")
	sync := fs.Bool("fsync", false, "fsync checkpoint writes (a killed process loses nothing the kernel has, so off by default)")
	verbose := fs.Bool("v", false, "print every kill")
	killAfter := fs.Int("max-kill-after", 60, "a kill inside a checkpoint write lands in one of the first N writes reaching its step; fewer put more kills inside writes (an epoch appends once to its epoch log) and fewer on the timer")
	maxDelay := fs.Duration("max-delay", 400*time.Millisecond, "timer kills land 10ms to this long after a worker starts; a workload that takes longer to start its queries (stateful: twelve queries) needs more for its kills to reach the checkpoint writes")
	conf := confFlags{}
	fs.Var(conf, "conf", "a session setting key=value for the workload's queries, e.g. stateStore.provider=pebble (repeatable)")
	if err := parseFlags(fs, args, env); err != nil {
		return exitCode(err, "chaos", stderr)
	}
	exe, err := os.Executable()
	if err != nil {
		return exitCode(err, "chaos", stderr)
	}
	work := *dir
	if work == "" {
		if work, err = os.MkdirTemp("", "arrowstream-chaos-"); err != nil {
			return exitCode(err, "chaos", stderr)
		}
		defer os.RemoveAll(work)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := chaos.Config{
		Cycles: *cycles, Records: *records, Seed: *seed, Workload: workload.String(), Dir: work,
		Command:      func() *exec.Cmd { return exec.Command(exe, "chaos", "--worker") },
		NoSync:       !*sync,
		Conf:         conf,
		MaxKillAfter: *killAfter,
		MaxDelay:     *maxDelay,
	}
	if *verbose {
		cfg.Progress = stderr
	}
	start := time.Now()
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		return exitCode(err, "chaos", stderr)
	}
	fmt.Fprint(stdout, rep.Details())
	fmt.Fprintln(stdout, rep.Line())
	if !rep.OK() {
		fmt.Fprintf(stderr, "arrowstream chaos: lost or duplicated records after %s\n", time.Since(start).Round(time.Second))
		return 1
	}
	return 0
}
