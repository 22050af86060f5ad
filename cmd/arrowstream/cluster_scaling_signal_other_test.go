//go:build !unix

package main

import "testing"

// stopInstances: the catch-up measurement needs SIGSTOP (unix only).
func stopInstances(t *testing.T, _ []*clusterInstance) {
	t.Helper()
	t.Skip("the catch-up measurement stops processes with SIGSTOP (unix only)")
}

func continueInstances(*testing.T, []*clusterInstance) {}
