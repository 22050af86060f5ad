package pebblestore

import "github.com/arrowstream/arrowstream/checkpoint"

// batchAccount reserves a store's epoch batch (the updated keys and
// values Pebble copies into it, and its index, on the Go heap) on the
// table's account while the store holds it
// (checkpoint.EpochBufferPartition), a chunk at a time so that a write
// costs an addition: the batch may pass what is reserved by less than a
// chunk. A refusal fails the write (and so the epoch, before its commit);
// the reservation is returned once the batch is committed or dropped.
type batchAccount struct {
	reserve  func(n int64) error // nil: nothing reserved
	held     int64               // the batch's estimated bytes
	reserved int64
}

// An entry's estimated bytes: its record in the batch's buffer (the key
// and value with a kind byte and two length varints), which grows by
// doubling (half again on average), the index's skiplist node with its
// links (batchNodeBytes), and the store's map of keys it wrote (the key's
// string and a map slot, existsEntryBytes). TestEpochBatchReserved checks
// the sum against the heap a batch really takes.
const (
	batchNodeBytes   = 64
	existsEntryBytes = 48
)

func batchEntryBytes(k, v int) int64 {
	rec := int64(k + v + 3)
	return rec + rec/2 + batchNodeBytes + int64(k) + existsEntryBytes
}

// batchChunk is how far the batch may grow past its reservation.
const batchChunk = 64 << 10

// grow notes an entry of a k-byte key and a v-byte value written to the
// batch.
func (a *batchAccount) grow(k, v int) error {
	if a.reserve == nil {
		return nil
	}
	n := batchEntryBytes(k, v)
	a.held += n
	if d := a.held - a.reserved; d >= batchChunk {
		if err := a.reserve(d); err != nil {
			a.held -= n
			return err
		}
		a.reserved += d
	}
	return nil
}

// release returns the reservation (the batch was committed or dropped).
func (a *batchAccount) release() {
	if a.reserve != nil && a.reserved != 0 {
		_ = a.reserve(-a.reserved)
	}
	a.held, a.reserved = 0, 0
}

var _ checkpoint.EpochBufferPartition = (*Partition)(nil)

// SetEpochBufferReserver implements checkpoint.EpochBufferPartition: the
// stores begun after it reserve their batches with reserve.
func (p *Partition) SetEpochBufferReserver(reserve func(n int64) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserve = reserve
}
