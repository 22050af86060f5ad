package arrowstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestPebbleBoundedWorkingSet runs the memory-limit child (a running count
// checked row by row) over state several times its GOMEMLIMIT: with the
// Pebble provider and a small stateStore.pebble.liveStateBytes the
// aggregation keeps only a bounded working set live, and the child's
// measured peak Go heap stays near the limit; the memory provider's run of
// the same query shows how far the state outgrows it.
func TestPebbleBoundedWorkingSet(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess memory-limit runs: skipped in -short")
	}
	if raceEnabled {
		t.Skip("memory limits are not meaningful under the race detector")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const (
		keys     = 600_000
		perEpoch = 50_000
		limit    = 24 << 20
		live     = 2 << 20
	)
	run := func(provider string) memLimitResult {
		dir := t.TempDir()
		cmd := exec.Command(exe, "-test.run=^TestStateStoreMemoryLimitChild$")
		cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.Itoa(limit), memLimitEnvProvider+"="+provider,
			memLimitEnvKeys+"="+strconv.Itoa(keys), memLimitEnvDir+"="+dir,
			memLimitEnvPerEpoch+"="+strconv.Itoa(perEpoch), memLimitEnvPasses+"=2",
			memLimitEnvLive+"="+strconv.Itoa(live))
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		child, err := testutil.StartCmd(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Wait(testutil.TreeProgress(dir), 0); err != nil {
			t.Fatalf("%s child: %v\n%s\n%s", provider, err, stdout.String(), child.Stderr.String())
		}
		var res memLimitResult
		sc := bufio.NewScanner(&stdout)
		for sc.Scan() {
			if line := sc.Bytes(); bytes.HasPrefix(line, []byte("{")) {
				if err := json.Unmarshal(line, &res); err != nil {
					t.Fatal(err)
				}
			}
		}
		if res.Error != "" {
			t.Fatalf("%s child: %s", provider, res.Error)
		}
		if res.StateRows != keys {
			t.Fatalf("%s: %d keys in state, want %d", provider, res.StateRows, keys)
		}
		t.Logf("%s: %d epochs, %d rows, %d keys in state; peak Go heap %d MiB, peak RSS %d MiB, operator memory %d MiB (GOMEMLIMIT %d MiB, live budget %d MiB)",
			provider, res.Epochs, res.Rows, res.StateRows, res.PeakHeap>>20, res.PeakRSS>>20, res.MemoryMetric>>20, limit>>20, live>>20)
		return res
	}
	mem := run("memory")
	peb := run("pebble")
	if mem.PeakHeap < 3*limit {
		t.Errorf("memory provider: peak heap %d MiB is not several times the %d MiB limit: the test proves nothing", mem.PeakHeap>>20, limit>>20)
	}
	if peb.PeakHeap > limit+limit/2 {
		t.Errorf("pebble: peak heap %d MiB over state the memory provider holds in %d MiB: the working set is not bounded by the %d MiB limit",
			peb.PeakHeap>>20, mem.PeakHeap>>20, limit>>20)
	}
}
