package security

import (
	"strconv"
	"testing"
)

// TestRangeStreamsUnderLimit: range() makes its rows as they are read, on
// the query's allocator. Before (session 36), range(10000000) was built
// as 10M boxed rows while planning (~1 GB of heap outside every account,
// 30–40 s of CPU at load) and then refused by a 64 MiB query limit as one
// 80 MB batch: `SELECT count(*) FROM range(10000000)` could not run. Now
// it runs under a 16 MiB limit with the server's peak RSS barely moving,
// and the values are exact across batch boundaries (an oracle sums them).
func TestRangeStreamsUnderLimit(t *testing.T) {
	e := startServe(t, "--query-memory", strconv.Itoa(16<<20))
	pid := e.cmd.Process.Pid
	_, rssErr := vmRSS(pid)
	c := e.admin()
	c.mustRun(t, "SELECT 1")
	var base int64
	if rssErr == nil {
		base = vmHWM(t, pid)
	}
	for _, tc := range []struct {
		sql              string
		start, end, step int64
	}{
		{"SELECT count(*), sum(id), min(id), max(id) FROM range(10000000)", 0, 10_000_000, 1},
		{"SELECT count(*), sum(id), min(id), max(id) FROM range(-3, 200000, 3)", -3, 200_000, 3},
		{"SELECT count(*), sum(id), min(id), max(id) FROM range(500000, -7, -7)", 500_000, -7, -7},
	} {
		var n, sum int64
		lo, hi := int64(1<<62), int64(-1<<62)
		for v := tc.start; (tc.step > 0 && v < tc.end) || (tc.step < 0 && v > tc.end); v += tc.step {
			n++
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		rows := c.mustRun(t, tc.sql)
		want := []string{strconv.FormatInt(n, 10), strconv.FormatInt(sum, 10), strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)}
		if len(rows) != 1 || len(rows[0]) != 4 || rows[0][0] != want[0] || rows[0][1] != want[1] || rows[0][2] != want[2] || rows[0][3] != want[3] {
			t.Errorf("%s = %v, want %v", tc.sql, rows, want)
		}
	}
	if rssErr == nil {
		hwm := vmHWM(t, pid)
		t.Logf("peak RSS %d MiB (%d MiB before)", hwm>>20, base>>20)
		if hwm > base+128<<20 {
			t.Errorf("the server's peak RSS grew by %d MiB reading range()", (hwm-base)>>20)
		}
	}
	e.alive(t)
}
