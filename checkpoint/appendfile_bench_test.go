package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkAppendDurably measures a segment log's append path
// (appendDurably) per append of a given size, buffered against direct
// (whole blocks with O_DIRECT, every append of at least one block), with
// and without fdatasync. A file is closed and removed once it holds
// 64 MiB, as retention drops whole segments, so the page cache's cost of
// freeing pages is counted too. Besides ns/op (wall time per append) it
// reports the process's system and total CPU per append (getrusage) and
// the bytes written each way.
func BenchmarkAppendDurably(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, n := range []int{256, 16 << 10, 64 << 10, 128 << 10, 256 << 10, 1800 << 10} {
			for _, mode := range []string{"buffered", "direct"} {
				name := fmt.Sprintf("sync=%v/bytes=%d/%s", sync, n, mode)
				b.Run(name, func(b *testing.B) {
					w := &Writer{NoSync: !sync, BufferedAppends: mode == "buffered", DirectAppendMin: directBlock}
					benchAppend(b, w, n)
				})
			}
		}
	}
}

func benchAppend(b *testing.B, w *Writer, n int) {
	dir := b.TempDir()
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	var f *appendFile
	var size int64
	var files int
	var direct, buffered int64
	closeFile := func() {
		if f == nil {
			return
		}
		direct += f.directBytes
		buffered += f.bufferedBytes
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Remove(f.path); err != nil {
			b.Fatal(err)
		}
		f = nil
	}
	sys0, cpu0 := rusage(b)
	for b.Loop() {
		fresh := f == nil
		if fresh {
			size = 0
			files++
		}
		var err error
		f, err = appendDurably(w, dir, filepath.Join(dir, fmt.Sprintf("%d.seg", files)), f, size, fresh, buf)
		if err != nil {
			b.Fatal(err)
		}
		size += int64(n)
		if size >= 64<<20 {
			closeFile()
		}
	}
	closeFile()
	sys1, cpu1 := rusage(b)
	b.ReportMetric(float64((sys1-sys0).Nanoseconds())/float64(b.N), "sys-ns/op")
	b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(direct)/float64(b.N), "direct-B/op")
	b.ReportMetric(float64(buffered)/float64(b.N), "buffered-B/op")
}

// rusage is the process's system CPU and its total (user and system) CPU
// so far.
func rusage(b *testing.B) (sys, total time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Stime.Nano()), time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
