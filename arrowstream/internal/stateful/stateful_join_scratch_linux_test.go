//go:build linux

package stateful

import (
	"os"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"
)

// wholePagesResident counts the whole pages inside b that are mapped in
// (mincore), and all the whole pages inside it.
func wholePagesResident(t *testing.T, b []byte) (resident, pages int) {
	t.Helper()
	pg := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + pg - 1) &^ (pg - 1)
	hi := (start + uintptr(len(b))) &^ (pg - 1)
	if hi <= lo {
		return 0, 0
	}
	vec := make([]byte, (hi-lo)/pg)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			resident++
		}
	}
	return resident, len(vec)
}

// TestJoinScratchPrefaulted: the join's per-epoch scratch (split
// selections, pair indexes, encoded keys and hashes), made anew in a
// query's first epoch from a heap whose free pages went back to the OS,
// has its pages mapped in by one system call before the epoch writes it
// (about 90 traps of q4's first epoch). Without the prefault none of its
// pages is resident when made.
func TestJoinScratchPrefaulted(t *testing.T) {
	const n = 1 << 20
	debug.FreeOSMemory()
	var i32 []int32
	s := int32s(&i32, n)
	if r, all := wholePagesResident(t, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*4)); r != all {
		t.Errorf("int32s' new scratch of %d: %d of its %d pages resident", n, r, all)
	}
	debug.FreeOSMemory()
	var u64 []uint64
	w := uint64s(&u64, n)
	if r, all := wholePagesResident(t, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)); r != all {
		t.Errorf("uint64s' new scratch of %d: %d of its %d pages resident", n, r, all)
	}
	if len(s) != n || len(w) != n {
		t.Errorf("lengths %d and %d, want %d", len(s), len(w), n)
	}
}
