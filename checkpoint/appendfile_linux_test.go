package checkpoint

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// residentPages counts the pages of path's file in the page cache
// (mincore of a mapping of it), and its pages.
func residentPages(t *testing.T, path string) (resident, pages int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() == 0 {
		return 0, 0
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// TestWriteFileDirect: WriteFile of a large file leaves only its last
// partial page in the page cache (the whole blocks went direct), reads
// back whole, and through a buffered writer leaves every page cached.
func TestWriteFileDirect(t *testing.T) {
	dir := directDir(t)
	data := make([]byte, 1<<20+100)
	rand.New(rand.NewSource(3)).Read(data)
	for _, c := range []struct {
		name   string
		w      *Writer
		direct bool
	}{
		{"direct", &Writer{DirectAppendMin: directBlock}, true},
		{"default", &Writer{NoSync: true}, true},
		{"buffered", &Writer{NoSync: true, BufferedAppends: true}, false},
	} {
		path := filepath.Join(dir, c.name)
		if err := c.w.WriteFile(path, data[1:], false); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data[1:]) {
			t.Fatalf("%s: read back %d bytes (%v), differ at %d", c.name, len(got), err, firstDiff(got, data[1:]))
		}
		// Reading it back cached it: write it again to look.
		os.Remove(path)
		if err := c.w.WriteFile(path, data[1:], false); err != nil {
			t.Fatal(err)
		}
		res, pages := residentPages(t, path)
		if c.direct && res > 1 || !c.direct && res != pages {
			t.Fatalf("%s: %d of %d pages in the page cache after WriteFile", c.name, res, pages)
		}
	}
}

// TestSegmentLogDirectLeavesNoPages: a large epoch log append leaves at
// most its head's and tail's pages in the page cache.
func TestSegmentLogDirectLeavesNoPages(t *testing.T) {
	dir := filepath.Join(directDir(t), EpochLogDir)
	l, err := OpenSegmentLog(dir, &Writer{NoSync: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := make([]byte, 2*DefaultDirectAppendMin)
	for v := int64(1); v <= 3; v++ {
		if _, _, _, err := l.appendState(v, 0, func(dst []byte) []byte { return append(dst, body...) }, nil); err != nil {
			t.Fatal(err)
		}
	}
	res, pages := residentPages(t, filepath.Join(dir, segmentName(0)))
	if pages < 3*len(body)/os.Getpagesize() || res > 2*3 {
		t.Fatalf("%d of %d pages in the page cache after three appends of %d bytes", res, pages, len(body))
	}
}

// TestAppendFileMemoryFS: on tmpfs (where the page cache is the storage)
// a file takes buffered appends without trying O_DIRECT.
func TestAppendFileMemoryFS(t *testing.T) {
	const shm = "/dev/shm"
	var fs syscall.Statfs_t
	if err := syscall.Statfs(shm, &fs); err != nil || fs.Type != tmpfsMagic {
		t.Skipf("no tmpfs at %s", shm)
	}
	dir, err := os.MkdirTemp(shm, "appendfile")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(dir)
	a, err := createAppendFile(filepath.Join(dir, "0.seg"), &Writer{DirectAppendMin: directBlock})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p := make([]byte, 5*directBlock)
	if err := a.writeAt(p, 0); err != nil {
		t.Fatal(err)
	}
	if a.d != nil || a.directBytes != 0 || !a.chosen {
		t.Fatalf("tmpfs file: direct file %v, %d bytes direct", a.d, a.directBytes)
	}
}
