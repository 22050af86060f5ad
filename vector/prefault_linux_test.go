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

// TestPrefaultMapsPagesNotMapped: prefault maps in every page a fresh
// buffer covers, the partial pages at its ends included, and no page
// outside it, without writing to any (a page written before keeps its
// bytes); a buffer whose first pages are mapped already (the Go heap
// placed it partly in memory it reused) has its other pages mapped in too;
// a buffer under prefaultMin is left alone. Session 33's prefault failed
// the first two: it left the partial pages to the copy, and a buffer whose
// first whole page was mapped wholly to it.
func TestPrefaultMapsPagesNotMapped(t *testing.T) {
	const pages = 64
	b, err := sysMap(pages * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(b)
	b[5*pageBytes+7] = 42 // a page the process already touched
	prefault(b[pageBytes+100 : len(b)-pageBytes-100])
	for p, ok := range resident(t, b) {
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

	partly, err := sysMap(pages * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(partly)
	partly[0], partly[pageBytes] = 1, 2
	prefault(partly)
	for p, ok := range resident(t, partly) {
		if !ok {
			t.Errorf("buffer with its first pages mapped: page %d not resident", p)
		}
	}
	if partly[0] != 1 || partly[pageBytes] != 2 {
		t.Errorf("mapped pages' bytes changed to %d, %d", partly[0], partly[pageBytes])
	}

	// Four pages and a byte: under session 33's threshold (64 KiB), a
	// gathered string column of q20 this size took a trap per page.
	const midBytes = 4*pageBytes + 1
	mid, err := sysMap(8 * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(mid)
	prefault(mid[:midBytes])
	for p, ok := range resident(t, mid) {
		if want := p <= midBytes/pageBytes; ok != want {
			t.Errorf("buffer of %d bytes: page %d resident %v, want %v", midBytes, p, ok, want)
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

// TestPrefaultLargeBufferEveryPage: a buffer of more than one mincore
// span (prefaultSpan pages), not page-aligned, is mapped in whole, a page
// in its middle mapped before splitting its runs.
func TestPrefaultLargeBufferEveryPage(t *testing.T) {
	pages := 3*prefaultSpan + 7
	b, err := sysMap(pages * pageBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer sysUnmap(b)
	b[prefaultSpan*pageBytes+9] = 3
	prefault(b[10 : len(b)-10])
	for p, ok := range resident(t, b) {
		if !ok {
			t.Fatalf("page %d of %d not resident", p, pages)
		}
	}
	if b[prefaultSpan*pageBytes+9] != 3 {
		t.Errorf("a touched page's byte changed")
	}
}

// BenchmarkPrefaultCopy copies into fresh memory (a new mapping each
// time), with prefault before the copy and without: a gathered string
// column of 24 KiB (under session 33's threshold), and 1 MiB of which the
// first 64 KiB were touched before (memory the Go heap reused, ahead of
// fresh pages; session 33's prefault skipped all of it).
func BenchmarkPrefaultCopy(b *testing.B) {
	for _, c := range []struct {
		name          string
		size, touched int
	}{{"24KiB", 24 << 10, 0}, {"1MiB_first64KiB_mapped", 1 << 20, 64 << 10}} {
		src := make([]byte, c.size)
		for i := range src {
			src[i] = byte(i)
		}
		for _, pre := range []bool{false, true} {
			name := c.name + "/copy"
			if pre {
				name = c.name + "/prefault+copy"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(c.size))
				for b.Loop() {
					dst, err := sysMap(c.size)
					if err != nil {
						b.Fatal(err)
					}
					for i := 0; i < c.touched; i += pageBytes {
						dst[i] = 1
					}
					if pre {
						prefault(dst)
					}
					copy(dst, src)
					sysUnmap(dst)
				}
			})
		}
	}
}
