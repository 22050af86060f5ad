package security

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// vmRSS reads the resident set of process pid, in bytes, from
// /proc/<pid>/status.
func vmRSS(pid int) (int64, error) { return testutil.VmRSS(pid) }

// TestCrossJoinRSSReturns is issue 17's attack seen from outside: a
// cross join grouped by a key with a value per pair, under
// --query-memory 64 MiB, fails with RESOURCE_EXHAUSTED naming the limit,
// and the server then returns the memory to the OS: once it has logged a
// return of free memory (its memory returner, at debug level) after the
// failure, its resident set is within 50 MB of where it was before the
// query. The wait is on the server's progress (each return it logs); at
// each return the bound is checked on the RSS read right after it. The
// returns are rate-limited to one a second, so a return that follows
// the failure comes within seconds however loaded the machine: the wait
// allows 2 minutes. Before session 13 a query stopped by a 64 MiB limit never
// held the returner's 64 MiB threshold, so the failure asked for no
// return: the first came 69–70 s later, when other releases added up to
// the threshold (RSS 68 → 232 → 97 MiB then), and this test failed.
func TestCrossJoinRSSReturns(t *testing.T) {
	// returnWait is how long a return may take to follow the failure.
	const returnWait = 2 * time.Minute
	const limit = 64 << 20
	const margin = 50 << 20
	const returnedLog = "returned free memory to the OS"
	e := startServe(t, "--query-memory", strconv.Itoa(limit), "--log-level", "debug")
	pid := e.cmd.Process.Pid
	if _, err := vmRSS(pid); err != nil {
		t.Skipf("no resident set to read here: %v", err)
	}
	c := e.admin()
	c.mustRun(t, "CREATE TABLE fast USING rate OPTIONS (rowsPerSecond '50000')")
	c.mustRun(t, "CREATE STREAMING TABLE big AS SELECT value FROM STREAM fast")
	waitFor(t, "20000 rows in big", func() bool {
		rows, err := c.run(t, "SELECT count(*) FROM big")
		if err != nil || len(rows) != 1 {
			return false
		}
		n, _ := strconv.Atoi(rows[0][0])
		return n >= 20000
	})
	c.mustRun(t, "DROP TABLE fast")
	// The table is still; let the setup's garbage be returned too, so
	// that the baseline is the server's resting size.
	c.mustRun(t, "SELECT count(*) FROM big")
	before := restingRSS(t, pid)

	start := time.Now()
	_, err := c.run(t, "SELECT a.value * 1000000 + b.value AS k, count(*) FROM big a CROSS JOIN big b GROUP BY 1 ORDER BY 2 DESC LIMIT 3")
	took := time.Since(start)
	refused(t, "cross join under a 64 MiB limit", err, codes.ResourceExhausted, "RESOURCE_EXHAUSTED", "memory limit of 67108864 bytes")
	// A return logged from here on may have begun before the failure
	// (while the query still held its memory): only one whose RSS is
	// within the bound ends the wait.
	seen := strings.Count(e.output(), returnedLog)
	failedRSS, _ := vmRSS(pid)
	t.Logf("the query failed after %v; RSS %d MiB before it, %d MiB when it failed", took.Round(10*time.Millisecond), before>>20, failedRSS>>20)

	failed := time.Now()
	peak, last := failedRSS, int64(-1)
	waitWithin(t, returnWait, "a return of memory to the OS after the failure that brings the server's RSS within 50 MB of where it was", func() bool {
		now, err := vmRSS(pid)
		if err != nil {
			t.Fatalf("reading the server's RSS: %v", err)
		}
		peak = max(peak, now)
		n := strings.Count(e.output(), returnedLog)
		if n == seen {
			return false
		}
		seen, last = n, now
		if now > before+margin {
			t.Logf("a return logged with RSS %d MiB (before %d MiB): waiting for the next", now>>20, before>>20)
			return false
		}
		return true
	})
	t.Logf("RSS %d MiB after the return (before %d MiB, highest seen after the failure %d MiB) %v after the failure",
		last>>20, before>>20, peak>>20, time.Since(failed).Round(10*time.Millisecond))
	e.alive(t)
}

// restingRSS waits until the server's resident set stops falling (three
// readings a second apart that do not go down by more than 1 MiB) and
// returns it.
func restingRSS(t *testing.T, pid int) int64 {
	t.Helper()
	prev, err := vmRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	steady := 0
	for i := 0; i < 60 && steady < 3; i++ {
		time.Sleep(time.Second)
		now, err := vmRSS(pid)
		if err != nil {
			t.Fatal(err)
		}
		if prev-now < 1<<20 {
			steady++
		} else {
			steady = 0
		}
		prev = now
	}
	return prev
}

// waitWithin is waitFor with its own deadline.
func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
