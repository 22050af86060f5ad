package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDifftestCommand runs a few cases and checks the summary line, and
// the refusals of bad usage.
func TestDifftestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := dispatch([]string{"difftest", "-cases", "3", "-seed", "7", "-duration", "0"}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d\nstdout %s\nstderr %s", got, stdout.String(), stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "difftest seed=7") || !strings.Contains(out, "cases=3 ") || !strings.Contains(out, "mismatches=0") {
		t.Fatalf("summary missing: %q", out)
	}
	for _, args := range [][]string{
		{"difftest", "-queries", "0"},
		{"difftest", "-cases", "-1"},
		{"difftest", "extra"},
		{"difftest", "-bogus"},
	} {
		stdout.Reset()
		stderr.Reset()
		if got := dispatch(args, &stdout, &stderr); got != 2 || !strings.Contains(stderr.String(), "usage: arrowstream difftest") {
			t.Errorf("%v: status %d, stderr %q; want 2 and the usage", args, got, stderr.String())
		}
	}
}
