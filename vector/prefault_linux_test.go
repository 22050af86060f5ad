//go:build linux

package vector

import (
	"syscall"
	"testing"
	"unsafe"
)

// resident reports, per page of the page-aligned mapping b, whether it is
// mapped in (mincore).
func resident(t *testing.T, b []byte) []bool {
	t.Helper()
	vec := make([]byte, (len(b)+pageBytes-1)/pageBytes)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out
}

// TestPrefaultMapsWholePagesOnly: prefault maps in every page lying
// wholly inside a fresh buffer without writing to it (a page written
// before keeps its bytes), leaves the partial pages at its ends to the
// copy, and leaves alone a small buffer and one whose first whole page is
// mapped (a reused buffer).
func TestPrefaultMapsWholePagesOnly(t *testing.T) {
	const pages = 64
	b, err := sysMap(pages * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(b)
	b[5*pageBytes+7] = 42 // a page the process already touched
	prefault(b[100 : len(b)-100])
	got := resident(t, b)
	for p, ok := range got {
		want := p > 0 && p < pages-1
		if ok != want {
			t.Errorf("page %d of %d resident %v, want %v", p, pages, ok, want)
		}
	}
	if b[5*pageBytes+7] != 42 {
		t.Errorf("a touched page's byte changed to %d", b[5*pageBytes+7])
	}
	for i, v := range b {
		if v != 0 && i != 5*pageBytes+7 {
			t.Fatalf("byte %d is %d after prefault, want 0", i, v)
		}
	}

	reused, err := sysMap(pages * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(reused)
	reused[0] = 1
	prefault(reused)
	for p, ok := range resident(t, reused) {
		if ok != (p == 0) {
			t.Errorf("buffer with its first page mapped: page %d resident %v, want %v", p, ok, p == 0)
		}
	}

	small, err := sysMap(prefaultMin)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(small)
	prefault(small[:prefaultMin-1])
	for p, ok := range resident(t, small) {
		if ok {
			t.Errorf("page %d of a buffer under prefaultMin mapped in", p)
		}
	}
}
