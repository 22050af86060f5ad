package checkpoint

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Buffers the package keeps between uses outside any table's account:
// the pooled scratch bodies and state encoders every table's commits
// share (stateScratch, stateEncoders), and each epoch log's write buffer
// (segmentLog.wbuf, kept up to maxKeptWriteBuf). Their capacities are
// counted in one process-wide total, SharedBufferBytes, which the server
// counts against its process-wide memory limit (--memory-limit), since
// no one table owns them. A pooled buffer the pool drops (sync.Pool drops
// its items over two collections) leaves the total when the collector
// frees it (runtime.AddCleanup), so the total is what is live, not what
// was ever made.

// sharedBytes is the total; it mirrors process-wide pools, which are
// themselves global.
var sharedBytes atomic.Int64

// SharedBufferBytes is the capacity of the buffers the checkpoint package
// keeps outside any table's account (pooled encode scratch and
// encoders, the epoch logs' write buffers), as last noted.
func SharedBufferBytes() int64 { return sharedBytes.Load() }

// sharedMeter counts one buffer's capacity in the total. Its count is a
// separate allocation so that the cleanup of the buffer's owner can take
// it back without keeping the owner alive.
type sharedMeter struct{ n *atomic.Int64 }

// newSharedMeter returns the meter of a buffer owned by owner: when the
// collector frees owner, what the meter last noted leaves the total.
func newSharedMeter[T any](owner *T) sharedMeter {
	n := new(atomic.Int64)
	runtime.AddCleanup(owner, func(n *atomic.Int64) { sharedBytes.Add(-n.Swap(0)) }, n)
	return sharedMeter{n: n}
}

// note makes the buffer's count c bytes.
func (m sharedMeter) note(c int) {
	if m.n == nil {
		return
	}
	if d := int64(c) - m.n.Swap(int64(c)); d != 0 {
		sharedBytes.Add(d)
	}
}

// scratchBuf is a pooled scratch body.
type scratchBuf struct {
	b []byte
	m sharedMeter
}

// stateScratch recycles the uncompressed bodies that are compressed and
// then dropped, so that an epoch's deltas do not each allocate one.
var stateScratch = sync.Pool{New: func() any {
	s := new(scratchBuf)
	s.m = newSharedMeter(s)
	return s
}}

// getScratch takes a scratch body from the pool; give it back with
// putScratch once its bytes are no longer used.
func getScratch() *scratchBuf { return stateScratch.Get().(*scratchBuf) }

// putScratch counts the body's capacity (it may have grown) and pools it.
func putScratch(s *scratchBuf) {
	s.m.note(cap(s.b))
	stateScratch.Put(s)
}

// stateEntrySize is a stateEntry's bytes in an encoder's entry list.
const stateEntrySize = int(unsafe.Sizeof(stateEntry{}))
