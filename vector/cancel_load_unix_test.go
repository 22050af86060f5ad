//go:build unix

package vector_test

import (
	"os/exec"
	"syscall"
)

// setGroup puts c in a process group of its own, so that killGroup takes
// timeout(1) and the shell it runs together.
func setGroup(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(c *exec.Cmd) {
	if c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}
