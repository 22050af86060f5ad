package stateful

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestStateAccountSetAllocatesNothing: setting a reservation, which
// every stateful operator does every epoch, allocates nothing (its lock
// returned the mutex's Unlock as a method value: one allocation a call).
func TestStateAccountSetAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	a := newStateAccount(memory.NewGoAllocator(), "test state")
	n := int64(0)
	if got := testing.AllocsPerRun(100, func() {
		n = (n + 1) % 3
		if err := a.set(n * 100); err != nil {
			t.Fatal(err)
		}
	}); got > 0 {
		t.Errorf("%.0f allocations per set", got)
	}
}
