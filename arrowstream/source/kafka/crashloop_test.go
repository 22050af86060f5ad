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
// killed at random moments (a child that dies of its own SIGKILL first
// counts as a self-kill), with more records produced after each; the
// killed runs must have committed at least 5 epochs (commits is the commit
// log directory relative to the run directory), so that the final child,
// which must process everything and exit 0, restarts in the middle of the
// stream.
func runCrashLoop(t *testing.T, envDir string, seed int64, commits string) crashLoopResult {
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
	deadline := time.Now().Add(120 * time.Second)
	cycle := 0
	// run starts a child; killAfter > 0 kills it then; it reports whether
	// the child finished.
	run := func(total int, killAfter time.Duration) bool {
		cycle++
		child, err := testutil.StartChild(exe, envDir+"="+res.dir, crashEnvBrokers+"="+brokers(c),
			crashEnvTotal+"="+strconv.Itoa(total), crashEnvSeed+"="+strconv.Itoa(cycle))
		if err != nil {
			t.Fatal(err)
		}
		timeout := time.Until(deadline)
		if killAfter > 0 {
			timeout = killAfter
		}
		select {
		case err := <-child.Done():
			if killAfter > 0 && testutil.KilledBySIGKILL(err) {
				res.selfKills++ // killed itself after a sink commit
				return false
			}
			if err != nil {
				t.Fatalf("child failed: %v\n%s", err, child.Stderr)
			}
			return true
		case <-time.After(timeout):
			err := child.Kill()
			var ee *exec.ExitError
			if killAfter == 0 || !errors.As(err, &ee) {
				t.Fatalf("child did not finish in time (%v)\n%s", err, child.Stderr)
			}
			return false
		}
	}
	for res.kills < kills {
		// total 0: the child never finishes on its own.
		if run(0, time.Duration(150+r.Intn(250))*time.Millisecond) {
			t.Fatal("child finished without a total")
		}
		res.kills++
		produce(t, c, "events", 3, "r", res.produced, perKill)
		res.produced += perKill
	}
	res.progressed = latestBatch(t, filepath.Join(res.dir, commits))
	if res.progressed < 5 {
		t.Fatalf("the killed runs committed only %d epochs", res.progressed)
	}
	if !run(res.produced, 0) {
		t.Fatal("final run did not finish")
	}
	return res
}

// childPlan parses a child's total and seed. A child without a total
// (one the parent kills) kills itself in half of the runs, after 0 to 7
// more epochs reach its sink: countdown is that number, -1 for never.
func childPlan(totalText, seedText string) (total int64, countdown int) {
	total, _ = strconv.ParseInt(totalText, 10, 64)
	seed, _ := strconv.ParseInt(seedText, 10, 64)
	r := rand.New(rand.NewSource(seed))
	countdown = -1
	if total == 0 && r.Intn(2) == 0 {
		countdown = r.Intn(8)
	}
	return total, countdown
}

// latestBatch returns the highest batch id in a metadata log directory.
func latestBatch(t *testing.T, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	latest := int64(-1)
	for _, e := range ents {
		if n, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && n > latest {
			latest = n
		}
	}
	return latest
}
