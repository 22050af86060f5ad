package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestTailBufferKeepsTheEnd(t *testing.T) {
	var b TailBuffer
	for i := 0; i < 3; i++ {
		if n, err := b.Write([]byte(strings.Repeat("x", tailSize/2))); n != tailSize/2 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	b.Write([]byte("end"))
	s := b.String()
	if len(s) != tailSize || !strings.HasSuffix(s, "xend") {
		t.Fatalf("kept %d bytes ending %q", len(s), s[len(s)-4:])
	}
}

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
	case "exit":
		os.Exit(3)
	default:
		fmt.Fprintln(os.Stderr, "child waiting")
		time.Sleep(time.Minute)
		os.Exit(4)
	}
	os.Exit(m.Run())
}

const childEnv = "ARROWSTREAM_TESTUTIL_CHILD"

func TestStartChildAndKill(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartChild(exe, childEnv+"=1")
	if err != nil {
		t.Fatal(err)
	}
	started := func(int64) bool { return strings.Contains(c.Stderr.String(), "child waiting") }
	if exited, err := c.WaitUntil(nil, started, 0); exited {
		t.Fatalf("child exited: %v\n%s", err, c.Stderr)
	}
	if err := c.Kill(); !KilledBySIGKILL(err) {
		t.Fatalf("Kill = %v, want death by SIGKILL", err)
	}
}

func TestKilledBySIGKILL(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   bool
	}{
		{"sigkill", "kill -9 $$", true},
		{"sigterm", "kill -15 $$", false},
		{"exit 3", "exit 3", false},
		{"success", "exit 0", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := exec.Command("sh", "-c", tc.script).Run()
			if got := KilledBySIGKILL(err); got != tc.want {
				t.Fatalf("KilledBySIGKILL(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
}
