package checkpoint

import (
	"runtime"
	"testing"
	"time"
)

// TestSharedBuffersCounted: the pooled scratch bodies count their
// capacity in SharedBufferBytes once given back, and leave it when the
// pool drops them and the collector frees them, so that the total is what
// is live (the server counts it against --memory-limit).
func TestSharedBuffersCounted(t *testing.T) {
	const size = 8 << 20
	before := SharedBufferBytes()
	s := getScratch()
	s.b = make([]byte, 0, size)
	putScratch(s)
	s = nil
	if got := SharedBufferBytes() - before; got < size {
		t.Fatalf("a pooled scratch body of %d bytes: SharedBufferBytes grew %d", size, got)
	}
	// sync.Pool drops its items over two collections; the cleanups run
	// after the collector frees them.
	deadline := time.Now().Add(2 * time.Minute)
	for SharedBufferBytes()-before >= size {
		if time.Now().After(deadline) {
			t.Fatalf("the pool dropped its scratch body, SharedBufferBytes still counts %d bytes over %d", SharedBufferBytes()-before, before)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEpochLogWriteBufferCounted: an epoch log's kept write buffer (an
// append of a 1 MiB record) counts in SharedBufferBytes while the log is
// open, and leaves it on Close.
func TestEpochLogWriteBufferCounted(t *testing.T) {
	l, err := OpenSegmentLog(t.TempDir(), &Writer{NoSync: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	before := SharedBufferBytes()
	if _, err := l.add(kindOffsets, 0, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if got := SharedBufferBytes() - before; got < 1<<20 || int(got) != cap(l.wbuf) {
		t.Errorf("after an append of 1 MiB: SharedBufferBytes grew %d, the kept write buffer holds %d", got, cap(l.wbuf))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := SharedBufferBytes() - before; got != 0 {
		t.Fatalf("after Close SharedBufferBytes is %d over its start", got)
	}
}
