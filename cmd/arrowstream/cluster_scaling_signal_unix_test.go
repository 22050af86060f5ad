//go:build unix

package main

import (
	"syscall"
	"testing"
)

// stopInstances stops the instances' processes (SIGSTOP) until
// continueInstances; the test's end continues them in any case, so that
// they can be interrupted.
func stopInstances(t *testing.T, insts []*clusterInstance) {
	t.Helper()
	for _, ci := range insts {
		pid := ci.p.cmd.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("stop instance %s (pid %d): %v", ci.addr, pid, err)
		}
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	}
}

// continueInstances continues stopped instances (SIGCONT).
func continueInstances(t *testing.T, insts []*clusterInstance) {
	t.Helper()
	for _, ci := range insts {
		if err := syscall.Kill(ci.p.cmd.Process.Pid, syscall.SIGCONT); err != nil {
			t.Fatalf("continue instance %s: %v", ci.addr, err)
		}
	}
}
