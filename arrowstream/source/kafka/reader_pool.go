package kafka

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchPool is the memory a Source's consumers decode fetches into:
// franz-go takes the []kgo.Record of every record batch and the buffer a
// compressed batch is decompressed into from it (kgo.WithPools), and
// gives both back once every record of the batch was recycled
// ((*kgo.Record).Recycle, called by the reader once the record's bytes
// are copied into Arrow buffers).
//
// Without it every fetch was decoded into fresh memory: in cluster mode an
// instance's held epoch (about 150K records at three instances) was
// fetched and decoded at once, on pages the process had never touched, so
// each instance faulted as much as the single instance reading all the
// input (docs/cluster.md, session 29). With it, and with fetches bounded
// (reader_client.go), a reader's records live in a few MiB that go round.
//
// The pool keeps at most maxBytes of each kind; what does not fit goes to
// the garbage collector (a pool that keeps all it was ever given would
// hold an epoch's peak forever). Slices are kept by capacity class: class
// c holds capacities in [2^c, 2^(c+1)). A request for n takes a slice of
// n's class if its capacity suffices, else one of the next class (all
// suffice); new slices are sized n rounded up to an eighth of its class,
// so that batches of about the same size share slices without wasting
// much. It is safe for concurrent use: franz-go gets from its fetch
// goroutines, the reader puts from its own.
type fetchPool struct {
	maxBytes int

	mu       sync.Mutex
	recs     [poolClasses][][]kgo.Record
	recBytes int // record bytes kept (cap × recordSize)
	bufs     [poolClasses][][]byte
	bufBytes int
	reused   int // gets served from the pool (tests)
}

// poolClasses covers capacities up to 2^(poolClasses-1) elements; a
// larger slice is never kept.
const poolClasses = 28

// minPoolClass is the smallest class handed out: a record batch of a few
// records still takes a slice others can reuse.
const minPoolClass = 6

// recordSize is the memory of one kgo.Record in a pooled slice.
const recordSize = int(unsafe.Sizeof(kgo.Record{}))

// defaultFetchPoolBytes bounds each kind of memory a Source's pool keeps:
// a few bounded fetches (reader_client.go) with room to spare.
const defaultFetchPoolBytes = 16 << 20

var (
	_ kgo.PoolRecords         = (*fetchPool)(nil)
	_ kgo.PoolDecompressBytes = (*fetchPool)(nil)
)

func newFetchPool(maxBytes int) *fetchPool {
	return &fetchPool{maxBytes: maxBytes}
}

// class is the class of capacity n: floor(log2 n), at least
// minPoolClass.
func class(n int) int {
	return max(minPoolClass, bits.Len(uint(n))-1)
}

// roundUp is n rounded up to an eighth of its class (the size of a new
// slice).
func roundUp(n int) int {
	n = max(n, 1<<minPoolClass)
	step := 1 << (class(n) - 3)
	return (n + step - 1) &^ (step - 1)
}

// take removes and returns a slice of capacity ≥ n from free (classes of
// slices), or ok false; fit reports a slice's capacity.
func take[S any](free *[poolClasses][]S, n int, fit func(S) int) (S, bool) {
	var zero S
	c := class(n)
	for k := c; k < min(c+2, poolClasses); k++ {
		l := free[k]
		for i := len(l) - 1; i >= 0 && i >= len(l)-4; i-- { // a few of n's class may be too small
			if s := l[i]; fit(s) >= n {
				l[i] = l[len(l)-1]
				l[len(l)-1] = zero
				free[k] = l[:len(l)-1]
				return s, true
			}
		}
	}
	return zero, false
}

// GetRecords implements kgo.PoolRecords: a slice of capacity ≥ n, from
// the pool when one fits.
func (p *fetchPool) GetRecords(n int) []kgo.Record {
	p.mu.Lock()
	s, ok := take(&p.recs, n, func(s []kgo.Record) int { return cap(s) })
	if ok {
		p.recBytes -= cap(s) * recordSize
		p.reused++
	}
	p.mu.Unlock()
	if ok {
		return s[:0]
	}
	return make([]kgo.Record, 0, roundUp(n))
}

// PutRecords implements kgo.PoolRecords. franz-go zeroed the records the
// batch kept (Recycle) and decodes every field of the records it hands out
// again, so the slice is not cleared here: clearing its whole capacity
// would touch the pages a smaller batch never used. (A record decoded
// below a fetch's offset and dropped keeps pointing into its batch's bytes
// until the slice is reused: at most a partial batch per kept slice.)
func (p *fetchPool) PutRecords(s []kgo.Record) {
	c := class(cap(s))
	if cap(s) < 1<<minPoolClass || c >= poolClasses {
		return
	}
	size := cap(s) * recordSize
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.recBytes+size > p.maxBytes {
		return
	}
	p.recBytes += size
	p.recs[c] = append(p.recs[c], s[:0])
}

// GetDecompressBytes implements kgo.PoolDecompressBytes. A snappy block
// (what franz-go's producer writes by default) starts with its decoded
// length; for other codecs twice the compressed size is a guess, and the
// codec grows a buffer that is too small (the grown buffer comes back to
// PutDecompressBytes).
func (p *fetchPool) GetDecompressBytes(compressed []byte, codec kgo.CompressionCodecType) []byte {
	want := 2 * len(compressed)
	if codec == kgo.CodecSnappy && !bytes.HasPrefix(compressed, xerialPrefix) {
		if n, k := binary.Uvarint(compressed); k > 0 && n <= maxSnappyGuess {
			want = int(n)
		}
	}
	p.mu.Lock()
	b, ok := take(&p.bufs, want, func(b []byte) int { return cap(b) })
	if ok {
		p.bufBytes -= cap(b)
		p.reused++
	}
	p.mu.Unlock()
	if ok {
		return b[:0]
	}
	return make([]byte, 0, roundUp(want))
}

// xerialPrefix starts a snappy batch in the Java client's framing (no
// decoded length up front).
var xerialPrefix = []byte{130, 83, 78, 65, 80, 80, 89, 0}

// maxSnappyGuess bounds the decoded length taken from a batch's header
// (the codec checks it again against its own limit).
const maxSnappyGuess = 64 << 20

// PutDecompressBytes implements kgo.PoolDecompressBytes (franz-go zeroed
// the bytes it wrote).
func (p *fetchPool) PutDecompressBytes(b []byte) {
	c := class(cap(b))
	if cap(b) < 1<<minPoolClass || c >= poolClasses {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bufBytes+cap(b) > p.maxBytes {
		return
	}
	p.bufBytes += cap(b)
	p.bufs[c] = append(p.bufs[c], b[:0])
}

// stats returns the bytes of records and of decompression buffers the
// pool holds and how many gets it served (tests).
func (p *fetchPool) stats() (recs, bufs, reused int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.recBytes, p.bufBytes, p.reused
}

// recycle gives records the reader is done with back to their batches'
// pools (each record once; the slice is cleared).
func recycle(recs []*kgo.Record) {
	for i, r := range recs {
		if r != nil {
			r.Recycle()
			recs[i] = nil
		}
	}
}
