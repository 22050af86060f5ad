package kafka_test

import (
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// crashLoopResult is what a SIGKILL parent loop leaves for the test to
// check: the run directory (the children's checkpoints and output), the
// records produced, the kills, how many of them the child did itself, and
// the last epoch the killed runs committed.
type crashLoopResult struct {
	dir                        string
	produced, kills, selfKills int
	progressed                 int64
	start                      time.Time
}

// runCrashLoop is the parent side of the Kafka SIGKILL tests. kfake runs
// in this process; the child is this test binary re-executed with envDir
// set to the run directory. 20 children that never finish on their own are
// killed once the commit log (commits, relative to the run directory) has
// grown by 1 or 2 epochs since their start (a child that dies of its own
// SIGKILL first counts as a self-kill), with more records produced after
// each; the killed runs must have committed at least 5 epochs, so that the
// final child, which must process everything and exit 0, restarts in the
// middle of the stream. No wait has a wall-clock limit: each gives up only
// when the child shows no progress (commit log, run directory, stderr) for
// testutil.DefaultStall, so the loop passes on a heavily loaded machine.
func runCrashLoop(t *testing.T, envDir string, seed int64, ckpt string) crashLoopResult {
	t.Helper()
	if testing.Short() {
		t.Skip("subprocess crash loop")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const kills, initial, perKill = 20, 2000, 150
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "r", 0, initial)
	res := crashLoopResult{dir: t.TempDir(), produced: initial, start: time.Now()}
	r := rand.New(rand.NewSource(seed))
	epochs := func() int64 { return latestBatch(t, filepath.Join(res.dir, ckpt)) + 1 }
	progress := testutil.Any(epochs, testutil.TreeProgress(res.dir))
	cycle := 0
	// run starts a child; killAfter > 0 kills it once that many more
	// epochs are in the commit log; it reports whether the child finished.
	run := func(total int, killAfter int64) bool {
		cycle++
		child, err := testutil.StartChild(exe, envDir+"="+res.dir, crashEnvBrokers+"="+brokers(c),
			crashEnvTotal+"="+strconv.Itoa(total), crashEnvSeed+"="+strconv.Itoa(cycle))
		if err != nil {
			t.Fatal(err)
		}
		if killAfter == 0 {
			if err := child.Wait(progress, 0); err != nil {
				t.Fatalf("final child failed: %v\n%s", err, child.Stderr)
			}
			return true
		}
		from := epochs()
		exited, err := child.WaitUntil(progress, func(int64) bool { return epochs()-from >= killAfter }, 0)
		switch {
		case exited && testutil.KilledBySIGKILL(err):
			res.selfKills++ // killed itself after a sink commit
			return false
		case exited && err == nil:
			return true
		case exited:
			t.Fatalf("child failed: %v\n%s", err, child.Stderr)
		}
		err = child.Kill()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("killing the child: %v\n%s", err, child.Stderr)
		}
		return false
	}
	for res.kills < kills {
		// total 0: the child never finishes on its own.
		if run(0, 1+r.Int63n(2)) {
			t.Fatal("child finished without a total")
		}
		res.kills++
		produce(t, c, "events", 3, "r", res.produced, perKill)
		res.produced += perKill
	}
	res.progressed = latestBatch(t, filepath.Join(res.dir, ckpt))
	if res.progressed < 5 {
		t.Fatalf("the killed runs committed only %d epochs", res.progressed)
	}
	if !run(res.produced, 0) {
		t.Fatal("final run did not finish")
	}
	return res
}

// childPlan parses a child's total and seed. A child without a total
// (one the parent kills) kills itself in half of the runs, after 0 or 1
// more epochs reach its sink: countdown is that number, -1 for never.
// The parent kills a child once 1 or 2 epochs are in the commit log, so a
// countdown below that always wins, however slow the machine: the sink
// sees an epoch before the commit log does.
func childPlan(totalText, seedText string) (total int64, countdown int) {
	total, _ = strconv.ParseInt(totalText, 10, 64)
	seed, _ := strconv.ParseInt(seedText, 10, 64)
	r := rand.New(rand.NewSource(seed))
	countdown = -1
	if total == 0 && r.Intn(2) == 0 {
		countdown = r.Intn(2)
	}
	return total, countdown
}

// latestBatch returns the highest batch id in a metadata log directory.
func latestBatch(t *testing.T, ckpt string) int64 {
	if ok, err := checkpoint.HasEpochLog(ckpt); err != nil || !ok {
		return -1
	}
	log, err := checkpoint.OpenCommitLog(ckpt, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	latest, _, ok, err := log.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return -1
	}
	return latest
}
