package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestWriteVersion(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.99",
		Main:      debug.Module{Path: "github.com/arrowstream/arrowstream", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2026-12-01T20:00:00Z"},
		},
	}
	var out bytes.Buffer
	writeVersion(&out, info, true)
	for _, want := range []string{"arrowstream v1.2.3\n", "module     github.com/arrowstream/arrowstream\n",
		"revision   0123abcd (modified (uncommitted changes))\n", "go         go1.99 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	info.Main.Version = "(devel)"
	info.Settings = nil
	writeVersion(&out, info, true)
	if !strings.Contains(out.String(), "revision   unknown") || !strings.Contains(out.String(), "(devel") {
		t.Errorf("devel build without VCS: %s", out.String())
	}
}

// TestVersionBuiltBinary builds the command with go build, as README's
// install step does, and checks that version reports the checkout's
// revision and the Go version.
func TestVersionBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	bin := filepath.Join(t.TempDir(), "arrowstream")
	build := exec.Command(gobin, "build", "-buildvcs=auto", "-o", bin, ".")
	build.Env = os.Environ()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("arrowstream version: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "module     github.com/arrowstream/arrowstream\n") || !strings.Contains(text, "go         go1.") {
		t.Errorf("version output:\n%s", text)
	}
	if strings.Contains(text, "revision   unknown") {
		// Some toolchains embed no VCS stamp (e.g. in a git worktree here):
		// the no-stamp output is checked by TestWriteVersion.
		t.Logf("the build has no VCS information:\n%s", text)
		return
	}
	if rev, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		if !strings.Contains(text, "revision   "+strings.TrimSpace(string(rev))) {
			t.Errorf("version does not name HEAD %s:\n%s", rev, text)
		}
	}
}
