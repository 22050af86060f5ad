package security

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// vmHWM reads the peak resident set of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", sc.Text(), err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM line", pid)
	return 0
}

// TestRowKernelsRefusedOverLimit is issue 17's row kernels that built
// values on the Go heap outside every limit (repeat up to its 1 GiB cap,
// lpad, concat; repeat('x', 50000000) took ~1.2 GB while it was merely
// planned): under --query-memory 64 MiB each is refused with
// RESOURCE_EXHAUSTED naming the limit and the function, before the value
// is built, so the server's peak resident set stays far under what the
// values would take; the server answers the next query and no query
// leaves memory on its allocator.
func TestRowKernelsRefusedOverLimit(t *testing.T) {
	const limit = 64 << 20
	// What the server's peak resident set may grow by over the whole
	// test: the limit, the Go runtime's slack, the tables. Every refused
	// value below is 400 MB or more (the column of per-row repeats 5 GB).
	const hwmBound = 320 << 20
	e := startServe(t, "--query-memory", strconv.Itoa(limit))
	pid := e.cmd.Process.Pid
	if _, err := vmRSS(pid); err != nil {
		t.Skipf("no resident set to read here: %v", err)
	}
	c := e.admin()
	// 24 strings of 1 MB; counts of 500M each (each row under repeat's
	// 1 GiB cap, their sum 5 GB).
	c.mustRun(t, "CREATE TABLE strs AS SELECT repeat('y', 1000000) AS s FROM range(24)")
	c.mustRun(t, "CREATE TABLE counts AS SELECT 500000000 AS n FROM range(10)")
	e.alive(t)
	base := vmHWM(t, pid)

	for _, tc := range []struct{ name, fn, sql string }{
		{"constant repeat", "repeat", "SELECT repeat('x', 50000000)"},
		{"constant lpad", "lpad", "SELECT lpad('a', 400000000, 'b')"},
		{"concat over large strings", "concat", "SELECT length(concat(s, s, s, s, s, s, s, s)) FROM strs"},
		{"repeat with per-row counts", "repeat", "SELECT length(repeat('x', n)) FROM counts"},
		{"format_string of wide conversions", "format_string", "SELECT format_string(repeat('%1$1000000s', 400), 'a')"},
		// Found in session 36: 400 MB of element indices made unaccounted,
		// then the elements' buffer to the allocator's panic (+800 MB).
		{"array_repeat of a constant", "array_repeat", "SELECT size(array_repeat(1, 100000000))"},
		{"array_repeat of strings", "array_repeat", "SELECT size(array_repeat('xy', 100000000))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.run(t, tc.sql)
			refused(t, tc.sql, err, codes.ResourceExhausted, "RESOURCE_EXHAUSTED", "memory limit of 67108864 bytes", tc.fn)
			t.Logf("%s: %v", tc.sql, err)
			e.alive(t)
			hwm := vmHWM(t, pid)
			t.Logf("peak RSS now %d MiB", hwm>>20)
			if hwm > base+hwmBound {
				t.Errorf("%s: the server's peak RSS reached %d MiB, %d MiB over the %d MiB it had before (bound %d MiB)",
					tc.sql, hwm>>20, (hwm-base)>>20, base>>20, hwmBound>>20)
			}
		})
	}
	// Values under the limit are still built.
	if rows := c.mustRun(t, "SELECT length(repeat('x', n DIV 100)), length(lpad('a', 5000000, 'bc')) FROM counts LIMIT 1"); len(rows) != 1 || rows[0][0] != "5000000" || rows[0][1] != "5000000" {
		t.Errorf("small values: %v", rows)
	}
	t.Logf("peak RSS %d MiB (%d MiB before the refused queries)", vmHWM(t, pid)>>20, base>>20)
	if out := e.output(); strings.Contains(out, "left memory allocated") {
		t.Errorf("a query left memory on its allocator:\n%s", out)
	}
}
