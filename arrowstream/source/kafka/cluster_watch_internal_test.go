package kafka

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestWatcherCloseRightAfterArm: a source closed as soon as its watcher
// was first armed (a query stopped in its first idle moment) stops the
// loop cleanly, however the loop's goroutine is scheduled against close.
// The loop once read its done channel from the watcher's fields, which
// close clears: a loop that started after close closed a nil channel
// (a panic) and close waited for it for ever.
func TestWatcherCloseRightAfterArm(t *testing.T) {
	for i := 0; i < 2000; i++ {
		w := newEndWatcher(nil)
		w.newClient = func(...kgo.Opt) (*kgo.Client, error) { return nil, errors.New("no brokers in this test") }
		w.arm(1, PartitionOffsets{"ev": {0: 10}})
		w.close()
		// Armed again after close (a restarted query), and closed again.
		w.brokeAt = w.brokeAt.AddDate(-1, 0, 0)
		w.arm(2, PartitionOffsets{"ev": {0: 11}})
		w.close()
	}
}
