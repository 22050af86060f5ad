package vector_test

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// busyLoad starts the number of busy loops CANCEL_LOAD asks for (none when
// unset): processes that spin on a core each, so that a benchmark's
// goroutines get a fraction of a core as on a loaded machine, and the load
// is the same from run to run. Each loop is killed (its whole process
// group) by the returned stop, and by timeout(1) after 15 minutes if the
// benchmark dies first.
func busyLoad(b *testing.B) (stop func()) {
	n, _ := strconv.Atoi(os.Getenv("CANCEL_LOAD"))
	if n <= 0 {
		return func() {}
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			killGroup(c)
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command("timeout", "-s", "KILL", "900", "sh", "-c", "while :; do :; done")
		setGroup(c)
		if err := c.Start(); err != nil {
			stop()
			b.Fatalf("starting a busy loop for CANCEL_LOAD: %v", err)
		}
		cmds = append(cmds, c)
	}
	return stop
}
