package checkpoint

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"unsafe"
)

// The segment logs (the epoch log and the state log) append an epoch's
// records to the end of a file. Written through the page cache, a large
// append costs the kernel a new page per 4 KiB (allocated, charged,
// dirtied, later written back and freed with the file): on the machine
// the issue-19 figures come from, 1.6–3 ns of system CPU per byte, the
// largest single cost of a join that logs its rows. Written with O_DIRECT
// the bytes go from the write buffer to the device, for a fixed cost per
// write (a device request: about 30 µs of system CPU, 150–250 µs of
// waiting here) and a fraction of the cost per byte.
//
// An appendFile therefore splits an append at the file system's block
// boundaries: the head (up to the first block boundary at or after the
// file's end) and the tail (after the last whole block) are written
// through the page cache, the whole blocks between them with O_DIRECT,
// in that order. The file never holds padding: its length is always its
// logical length, so the segment formats, their readers and the torn-tail
// and damage checks are those of buffered appends. An append killed part
// way (a crash between the three writes, or a short write) leaves a
// prefix of its bytes, as a buffered append does: the head and the tail
// go through the page cache, whose partial last page a later append
// fills, so no append ever rewrites bytes already in the file.
//
// Only appends with at least directMin bytes of whole blocks go direct:
// below that the device request costs more than the pages. The choice of
// O_DIRECT is made once per file, at its first such append: not where the
// file system keeps files in memory (tmpfs, ramfs: the page cache is the
// storage), where O_DIRECT cannot be opened, or where the first direct
// write is refused (EINVAL: an alignment the file system does not take).
// The file then takes buffered appends only; a debug log line names the
// file and the reason.

// directBlock is the alignment of direct writes: of their file offsets,
// their lengths and their memory. 4096 is ext4's and XFS's usual block
// size and a multiple of every device's logical block.
const directBlock = 4096

// DefaultDirectAppendMin is the least number of whole blocks' bytes an
// append writes with O_DIRECT (Writer.DirectAppendMin).
const DefaultDirectAppendMin = 128 << 10

// appendFile is a segment file open for appending at its end.
type appendFile struct {
	path string
	f    *os.File // buffered: reads, stat, truncate, heads and tails
	d    *os.File // the same file opened with O_DIRECT, once chosen
	// min is the least bytes of whole blocks an append writes direct; 0
	// never (buffered only).
	min int
	// chosen: whether to write direct was decided (d set or not).
	chosen bool
	// directBytes and bufferedBytes count the bytes written each way,
	// copiedBytes those copied to be aligned.
	directBytes, bufferedBytes, copiedBytes int64
	// testDirect, when set, replaces the direct write (tests inject
	// refusals and failures with it).
	testDirect func(p []byte, off int64) (int, error)
	// exclusive: the file holds its lock (lockExclusive), so no other
	// log appends to it while it is open, and its length is the one its
	// owner keeps: the epoch log's appends need not stat it.
	exclusive bool
	// stats counts size calls (tests check that locked appends make none).
	stats int
}

// errBusy: another open file holds the segment's lock.
var errBusy = errors.New("locked by another open file")

// directMin is the least whole blocks' bytes an append writes direct for
// w, 0 when its appends are all buffered.
func (w *Writer) directMin() int {
	if w == nil {
		return DefaultDirectAppendMin
	}
	if w.BufferedAppends {
		return 0
	}
	if w.DirectAppendMin > 0 {
		return max(w.DirectAppendMin, directBlock)
	}
	return DefaultDirectAppendMin
}

// createAppendFile creates path for appending, refusing an existing file
// (O_EXCL: a second writer of the log).
func createAppendFile(path string, w *Writer) (*appendFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	return &appendFile{path: path, f: f, min: w.directMin()}, nil
}

// openAppendFile opens an existing path for appending.
func openAppendFile(path string, w *Writer) (*appendFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return &appendFile{path: path, f: f, min: w.directMin()}, nil
}

// Close closes the file.
func (a *appendFile) Close() error {
	err := a.f.Close()
	if a.d != nil {
		err = errors.Join(err, a.d.Close())
		a.d = nil
	}
	return err
}

// size returns the file's length as the file system has it.
func (a *appendFile) size() (int64, error) {
	a.stats++
	st, err := a.f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// writeAt appends p at off, the file's end: the head and the tail through
// the page cache, the whole blocks between them with O_DIRECT when there
// are at least a.min bytes of them (see above). On error a prefix of p
// may have been written.
func (a *appendFile) writeAt(p []byte, off int64) error {
	end := off + int64(len(p))
	lo := (off + directBlock - 1) &^ (directBlock - 1)
	hi := end &^ (directBlock - 1)
	if a.min == 0 || hi-lo < int64(a.min) || !a.chooseDirect() {
		return a.writeBuffered(p, off)
	}
	if err := a.writeBuffered(p[:lo-off], off); err != nil {
		return err
	}
	mid := p[lo-off : hi-off]
	if uintptr(unsafe.Pointer(unsafe.SliceData(mid)))&(directBlock-1) != 0 {
		// Not built in place (alignedAt): copied, into a buffer not kept
		// (the segment logs build in place; a caller that does not pays
		// an allocation, which is cheaper than the pages it saves).
		mid = append(alignedBytes(len(mid))[:0], mid...)
		a.copiedBytes += int64(len(mid))
	}
	if _, err := a.writeDirect(mid, lo); err != nil {
		st, serr := a.f.Stat()
		if !errors.Is(err, syscall.EINVAL) || a.directBytes > 0 || serr != nil || st.Size() != lo {
			return fmt.Errorf("direct write of %d bytes at %d: %w", len(mid), lo, err)
		}
		// The file system opened O_DIRECT but refuses these writes, and
		// wrote nothing: buffered from now on.
		a.useBuffered(fmt.Sprintf("direct write refused: %v", err))
		return a.writeBuffered(p[lo-off:], lo)
	}
	a.directBytes += int64(len(mid))
	return a.writeBuffered(p[hi-off:], hi)
}

// writeDirect writes p, aligned, at off through the O_DIRECT file.
func (a *appendFile) writeDirect(p []byte, off int64) (int, error) {
	if a.testDirect != nil {
		return a.testDirect(p, off)
	}
	return a.d.WriteAt(p, off)
}

// writeBuffered writes p at off through the page cache.
func (a *appendFile) writeBuffered(p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	if _, err := a.f.WriteAt(p, off); err != nil {
		return err
	}
	a.bufferedBytes += int64(len(p))
	return nil
}

// chooseDirect decides, at the file's first append large enough, whether
// it takes direct writes, and reports whether it does.
func (a *appendFile) chooseDirect() bool {
	if a.chosen {
		return a.d != nil
	}
	a.chosen = true
	d, why := openDirect(a.f, a.path)
	if d == nil {
		a.useBuffered(why)
		return false
	}
	a.d = d
	slog.Debug("checkpoint: appends write whole blocks with O_DIRECT", "file", a.path, "min_bytes", a.min)
	return true
}

// useBuffered makes every later append of the file buffered.
func (a *appendFile) useBuffered(why string) {
	if a.d != nil {
		a.d.Close()
		a.d = nil
	}
	a.chosen, a.min = true, 0
	slog.Debug("checkpoint: appends are buffered", "file", a.path, "reason", why)
}

// alignedAt returns a zero-length slice of b's array (reslicing from its
// start) at a byte whose address lies at off's offset within a block, so
// that bytes appended to it for a write at file offset off have their
// whole blocks aligned in memory. b smaller than a block is returned
// empty as it is (an append that grows it copies its blocks).
func alignedAt(b []byte, off int64) []byte {
	b = b[:0]
	if cap(b) < 2*directBlock {
		return b
	}
	skip := (int(off) - int(uintptr(unsafe.Pointer(unsafe.SliceData(b[:1]))))) & (directBlock - 1)
	return b[skip:skip]
}

// arrayEnd is the address just past b's capacity: two slices with the
// same end share their array's tail (0 for no capacity).
func arrayEnd(b []byte) uintptr {
	if cap(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b[:1]))) + uintptr(cap(b))
}

// alignedBytes returns n bytes whose first byte is aligned to
// directBlock. The collector does not move heap objects, so the alignment
// holds for the slice's life.
func alignedBytes(n int) []byte {
	b := make([]byte, n+directBlock)
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (directBlock - 1))
	return b[skip : skip+n : skip+n]
}
