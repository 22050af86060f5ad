package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// vmFlags returns the VmFlags of the mapping holding addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			var s, e uintptr
			if _, err := fmt.Sscanf(fields[0], "%x-%x", &s, &e); err == nil {
				in = s <= addr && addr < e
			}
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.Fields(strings.TrimPrefix(line, "VmFlags:"))
		}
	}
	t.Fatalf("no mapping holds %#x in /proc/self/smaps", addr)
	return nil
}

func advised(t *testing.T, addr uintptr) bool {
	for _, f := range vmFlags(t, addr) {
		if f == "hg" {
			return true
		}
	}
	return false
}

// madviseMode makes the test independent of the machine's THP mode: the
// VMA flag MADV_HUGEPAGE sets is there whatever the mode.
func madviseMode(t *testing.T) string { return writeMode(t, "always [madvise] never") }

// grow allocates n bytes and touches none of them (a large allocation of
// memory the runtime just mapped is not zeroed).
func grow(n int) []byte { return make([]byte, n) }

// growFresh allocates 64 MiB blocks, none touched, until the runtime
// maps new address space (its total memory grows): the heap's free
// space, left by earlier tests, is taken first. It returns the blocks and
// an address in the last, which is in the new mapping.
// With strict, a block whose end is advised already (in address space
// mapped earlier) does not count.
func growFresh(t *testing.T, strict bool) ([][]byte, uintptr) {
	t.Helper()
	s := []metrics.Sample{{Name: totalMetric}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	var blocks [][]byte
	for range 512 {
		b := grow(64 << 20)
		blocks = append(blocks, b)
		metrics.Read(s)
		end := uintptr(unsafe.Pointer(&b[len(b)-1])) // its start may share the last mapping
		if s[0].Value.Uint64() > before && (!strict || !advised(t, end)) {
			return blocks, end
		}
	}
	t.Fatalf("32 GiB allocated and the runtime's total memory did not grow from %d", before)
	return nil, 0
}

func TestStartAdvisesTheHeap(t *testing.T) {
	live := grow(8 << 20)
	a, err := Start(Options{ModeFile: madviseMode(t), Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	st := a.Stats()
	if !st.Active || st.Passes != 1 || st.Calls == 0 || st.Bytes < int64(len(live)) {
		t.Fatalf("after Start: %+v", st)
	}
	if !advised(t, uintptr(unsafe.Pointer(&live[0]))) {
		t.Errorf("the heap mapping holding %p is not advised (VmFlags %v)", &live[0], vmFlags(t, uintptr(unsafe.Pointer(&live[0]))))
	}
	runtime.KeepAlive(live)
}

func TestCheckAdvisesAfterGrowth(t *testing.T) {
	a, err := Start(Options{ModeFile: madviseMode(t), Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	// Nothing grew: no pass.
	if grew, err := a.Check(); grew || err != nil {
		t.Fatalf("Check with no growth = %v, %v", grew, err)
	}
	big, p := growFresh(t, true) // new arenas, a new mapping
	before := a.Stats()
	grew, err := a.Check()
	if err != nil || !grew {
		t.Fatalf("Check after growing past the mapped memory = %v, %v", grew, err)
	}
	after := a.Stats()
	if after.Passes != before.Passes+1 || after.Calls <= before.Calls {
		t.Errorf("Check's pass: before %+v, after %+v", before, after)
	}
	if !advised(t, p) {
		t.Errorf("the new mapping at %#x is not advised after Check (VmFlags %v)", p, vmFlags(t, p))
	}
	runtime.KeepAlive(big)
}

func TestWatcherAdvisesAfterGrowth(t *testing.T) {
	a, err := Start(Options{ModeFile: madviseMode(t), Interval: time.Millisecond, MaxInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	passes := a.Stats().Passes
	big, p := growFresh(t, false)
	// Wait on progress, with a generous deadline: the watcher's timer
	// finds the growth.
	deadline := time.Now().Add(2 * time.Minute)
	for a.Stats().Passes == passes || !advised(t, p) {
		if time.Now().After(deadline) {
			t.Fatalf("the new mapping at %#x is still not advised after 2 minutes; %+v", p, a.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	runtime.KeepAlive(big)
}

func TestReserveAdvisesAhead(t *testing.T) {
	a, err := Start(Options{ModeFile: madviseMode(t), Interval: time.Hour, Reserve: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	big := grow(128 << 20)                         // lands in the reserved, advised address space
	p := uintptr(unsafe.Pointer(&big[len(big)-1])) // its end: its start may share the last mapping
	if !advised(t, p) {
		t.Errorf("an allocation after a 512 MiB reserve, at %#x, is not advised (VmFlags %v)", p, vmFlags(t, p))
	}
	runtime.KeepAlive(big)
}
