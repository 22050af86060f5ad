package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// bssProbe is in the binary's bss: anonymous read-write memory that is
// not the Go heap (the old advice, every anonymous mapping, took it).
var bssProbe [4 << 20]byte

// hugeSpans returns the mappings /proc/self/smaps flags "hg"
// (MADV_HUGEPAGE).
func hugeSpans(t *testing.T) []span {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var out []span
	var cur span
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			if _, err := fmt.Sscanf(fields[0], "%x-%x", &cur.start, &cur.end); err != nil {
				cur = span{}
			}
			continue
		}
		if strings.HasPrefix(line, "VmFlags:") && slices.Contains(strings.Fields(line[len("VmFlags:"):]), "hg") {
			out = append(out, cur)
		}
	}
	return out
}

// heapMapped is the heap's mapped bytes as the runtime counts them: the
// sum of /memory/classes/heap/*.
func heapMapped() uint64 {
	var s []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/heap/") {
			s = append(s, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		n += v.Value.Uint64()
	}
	return n
}

// mmapProbe maps n bytes of anonymous private read-write memory outside
// the Go heap, touched, as a C library or an mmap-based allocator would.
func mmapProbe(t *testing.T, n int) uintptr {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap %d bytes: %v", n, err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	return uintptr(unsafe.Pointer(&b[n/2]))
}

// Start advises the heap and nothing else: against /proc/self/smaps, the
// mapping of a live heap object is flagged, an mmap of our own and the
// bss are not, and what the Advisor newly flagged is no larger than the
// heap's mapped memory as the runtime counts it (the runtime's metadata
// mappings, the arena index among them, are 32 MiB and more on amd64).
func TestStartAdvisesOnlyTheHeap(t *testing.T) {
	live := grow(8 << 20)
	foreign := mmapProbe(t, 8<<20)
	bss := uintptr(unsafe.Pointer(&bssProbe[len(bssProbe)/2]))
	before := hugeSpans(t)
	a, err := Start(Options{ModeFile: madviseMode(t), Interval: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	if p := uintptr(unsafe.Pointer(&live[len(live)/2])); !advised(t, p) {
		t.Errorf("the heap mapping holding %#x is not advised (VmFlags %v)", p, vmFlags(t, p))
	}
	if advised(t, foreign) {
		t.Errorf("a foreign anonymous mapping, at %#x, is advised", foreign)
	}
	if advised(t, bss) {
		t.Errorf("the bss, at %#x, is advised", bss)
	}
	var added uint64
	for _, s := range hugeSpans(t) {
		if !slices.Contains(before, s) {
			added += uint64(s.end - s.start)
		}
	}
	if st, heap := a.Stats(), heapMapped(); added > heap || uint64(st.Bytes) > heap {
		t.Errorf("newly advised %d bytes (Stats %+v), more than the heap's %d mapped bytes", added, st, heap)
	}
	runtime.KeepAlive(live)
}

// With the kernel's THP mode "never" or "always", or no mode file (no
// THP on the host), Start advises nothing: no mapping gains the flag.
func TestInactiveOrMissingModeAdvisesNothing(t *testing.T) {
	live := grow(8 << 20)
	before := hugeSpans(t)
	for _, mode := range []string{"always madvise [never]", "[always] madvise never", ""} {
		file := writeMode(t, mode)
		if mode == "" {
			file += ".missing"
		}
		a, err := Start(Options{ModeFile: file})
		if mode == "" && err == nil {
			t.Errorf("no mode file: Start did not fail")
		}
		a.Stop()
		if after := hugeSpans(t); !slices.Equal(after, before) {
			t.Errorf("mode %q: the advised mappings changed: %x → %x", mode, before, after)
		}
	}
	runtime.KeepAlive(live)
}
