package ysb

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A peer module that does not build is skipped with the reason, not a
// failure of the benchmark.
func TestBuildDuckDBPeerSkipsBrokenModule(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cmd", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/broken\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cmd", "p", "main.go"), []byte("package main\n\nimport \"example.com/missing/dep\"\n\nfunc main() { dep.X() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	bin, cleanup, skip, err := BuildDuckDBPeer(context.Background(), dir, "./cmd/p")
	if err != nil {
		t.Fatalf("err = %v, want a skip", err)
	}
	if cleanup != nil {
		cleanup()
	}
	if bin != "" || !strings.Contains(skip, "does not build") || !strings.Contains(skip, "./cmd/p") {
		t.Fatalf("bin %q, skip %q: want no binary and a reason naming the package", bin, skip)
	}
}
