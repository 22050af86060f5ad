package testutil

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Child is a running re-execution of the test binary, the child side of
// a crash test (its TestMain recognises the environment it is given).
type Child struct {
	Cmd    *exec.Cmd
	Stderr *TailBuffer
	done   chan error
}

// StartChild re-executes the test binary exe running no test, with env
// ("NAME=value") added to this process's environment.
func StartChild(exe string, env ...string) (*Child, error) {
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	return StartCmd(cmd)
}

// StartCmd starts a prepared command as a Child (its stderr goes to the
// Child's TailBuffer, so that the waits count the child's log output as
// progress); set Args, Env and Stdout before the call.
func StartCmd(cmd *exec.Cmd) (*Child, error) {
	c := &Child{Cmd: cmd, Stderr: &TailBuffer{}, done: make(chan error, 1)}
	c.Cmd.Stderr = c.Stderr
	if err := c.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.done <- c.Cmd.Wait() }()
	return c, nil
}

// Done receives the result of Wait once the child has exited.
func (c *Child) Done() <-chan error { return c.done }

// Kill sends SIGKILL and returns the result of Wait; call it only while
// nothing was received from Done.
func (c *Child) Kill() error {
	c.Cmd.Process.Signal(syscall.SIGKILL)
	return <-c.done
}

// tailSize bounds what a TailBuffer keeps: enough for a panic's stack,
// small enough for a test failure message.
const tailSize = 16 << 10

// TailBuffer is an io.Writer for a child process's stderr that keeps the
// last 16 KiB written: a child killed dozens of times may log a lot, and
// the end holds the error that failed it. It may be read while the child
// still writes.
type TailBuffer struct {
	mu    sync.Mutex
	b     []byte
	total int64
}

// Write keeps p, dropping the oldest bytes beyond the bound.
func (l *TailBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	l.total += int64(len(p))
	if len(l.b) > tailSize {
		l.b = l.b[len(l.b)-tailSize:]
	}
	return len(p), nil
}

// String returns the bytes kept.
func (l *TailBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// KilledBySIGKILL reports whether err, from exec.Cmd.Wait, says the
// child died of SIGKILL (its own fault hook, or the parent).
func KilledBySIGKILL(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
