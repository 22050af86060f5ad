package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestChaosCommandErrors: the chaos subcommand's refusals, without running
// the harness (internal/chaos tests run it).
func TestChaosCommandErrors(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"chaos", "--workload", "socket"}, 2, "want one of memsink, continuous, files, kafka"},
		{[]string{"chaos", "--records", "0"}, 1, "records must be positive"},
		{[]string{"chaos", "--worker"}, 2, "ARROWSTREAM_CHAOS_WORKER is not set"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		got := dispatch(c.args, &stdout, &stderr)
		if got != c.status || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, got, stderr.String(), c.status, c.stderr)
		}
	}
}
