//go:build linux

package vector

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// threadMinflt is the calling thread's minor page faults so far (pages
// MADV_POPULATE_WRITE maps in count too: one a page).
func threadMinflt(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return ru.Minflt
}

// fillByProbing fills half of slots the way a table's growth does: each
// key's home slot is read, and the first empty one of its run written.
func fillByProbing(slots []groupSlot) {
	shift := uint(64 - 1)
	for n := len(slots); n > 1; n >>= 1 {
		shift--
	}
	mask := uint64(len(slots) - 1)
	for k := uint64(1); k <= uint64(len(slots)/2); k++ {
		p := fixedPos(k, shift)
		for slots[p&mask].gid != 0 {
			p++
		}
		slots[p&mask] = groupSlot{key: k, gid: uint32(k)}
	}
}

// TestFreshSlotsFaultEachPageOnce: a table from freshSlots filled by
// probing faults each of its pages in once; the same fill of a table from
// make faults a fresh page twice (the probe's read maps the zero page, the
// write then copies it), which is what freshSlots is there to avoid. The
// make table is the control: when the Go heap handed it pages already
// mapped (no fresh memory to measure) it compares nothing.
func TestFreshSlotsFaultEachPageOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory faults its own pages beside the table's")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, n := range []int{1 << 18, 1 << 11} { // 4 MiB (prefaulted), 32 KiB (cleared)
		pages := int64(n) * int64(unsafe.Sizeof(groupSlot{})) / pageBytes
		before := threadMinflt(t)
		control := make([]groupSlot, n)
		fillByProbing(control)
		controlFaults := threadMinflt(t) - before

		before = threadMinflt(t)
		fresh := freshSlots[groupSlot](n)
		for i, s := range fresh {
			if s != (groupSlot{}) {
				t.Fatalf("%d slots: slot %d is %+v before any write", n, i, s)
			}
		}
		fillByProbing(fresh)
		freshFaults := threadMinflt(t) - before
		t.Logf("%d slots (%d pages): make %d faults, freshSlots %d", n, pages, controlFaults, freshFaults)
		if freshFaults > pages+pages/8+2 {
			t.Errorf("%d slots (%d pages): freshSlots then probing took %d faults, want at most about one a page", n, pages, freshFaults)
		}
		if controlFaults < pages*3/2 {
			t.Logf("%d slots: the control's pages were not fresh (%d faults for %d pages): nothing to compare", n, controlFaults, pages)
			continue
		}
		if freshFaults*3/2 > controlFaults {
			t.Errorf("%d slots: freshSlots %d faults against make's %d: not fewer", n, freshFaults, controlFaults)
		}
		runtime.KeepAlive(control)
	}
}
