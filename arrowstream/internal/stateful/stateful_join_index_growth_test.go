package stateful

import (
	"math/rand"
	"runtime"
	"testing"
)

// TestJoinKeyIndexGrowsWithoutCopies: an index that grows from empty
// batch by batch (a side that never evicts, as q3's persons and
// auctions, each epoch adding keys) does not copy its slots: they are in
// pages that never move, where the slots grown by append allocated (and
// dropped) about four times what they kept, memory the harness's runs
// touch for the first time (docs/performance.md, "The join's key index:
// slots in pages, a table that splits"). 20,000 keys in 80
// batches of 250 new keys each (and as many repeats); the bound is on
// the bytes allocated per key indexed.
func TestJoinKeyIndexGrowsWithoutCopies(t *testing.T) {
	const batches, fresh = 80, 250
	x := newJoinKeyIndex[uint64]()
	bs := make([]*joinBatch[uint64], batches)
	for i := range bs {
		b := &joinBatch[uint64]{keys: make([]uint64, 2*fresh), keyNull: make([]bool, 2*fresh)}
		for r := range b.keys {
			// Half new keys, half the previous batch's.
			k := uint64(i*fresh + r/2)
			if r%2 == 1 && i > 0 {
				k = uint64((i-1)*fresh + r/2)
			}
			b.keys[r] = k*7919 + 13
		}
		b.end = int32(len(b.keys))
		bs[i] = b
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, b := range bs {
		if _, err := x.insertRows(b, 0, b.end); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	keys := x.len()
	if keys != batches*fresh {
		t.Fatalf("%d keys indexed, want %d", keys, batches*fresh)
	}
	perKey := float64(after.TotalAlloc-before.TotalAlloc) / float64(keys)
	t.Logf("%.1f bytes allocated a key (%d keys, %d rows)", perKey, keys, x.links.len())
	// A 24-byte slot (pages at most twice their use), the table's 16-byte
	// slots doubled (at most half full, and the dropped tables), two
	// 4-byte links (in pages that never move, session 28): 153.5
	// measured; with the links an array doubled, 170; with the slots
	// grown by append too, 258.
	if perKey > 180 {
		t.Fatalf("the index allocated %.1f bytes a key; want at most 180", perKey)
	}
}

// joinIndexSlots is the slot count of x's table (16-byte slots).
func joinIndexSlots[K joinKey](x *joinKeyIndex[K]) int { return int(x.words.HeapBytes() / 16) }

// TestJoinKeyIndexReservesForKeysNotRows: batches of many rows for few
// new keys (as q4's bids: 5,000 rows a batch, a few hundred new auctions
// among the bids for auctions already indexed) size the key table for
// the keys it holds: at most half full and, being a power of two grown
// by doubling, under four slots a key (the reservation by rows made it
// 32K slots for 3.5K keys). The index holds exactly the model's keys and
// rows after every batch.
func TestJoinKeyIndexReservesForKeysNotRows(t *testing.T) {
	t.Run("fixed", func(t *testing.T) { testJoinKeyIndexReservesForKeys(t, fixedTestKey) })
	t.Run("bytes", func(t *testing.T) { testJoinKeyIndexReservesForKeys(t, bytesTestKey) })
}

func testJoinKeyIndexReservesForKeys[K joinKey](t *testing.T, key func(int) K) {
	const rows = 5000
	rng := rand.New(rand.NewSource(5))
	x := newJoinKeyIndex[K]()
	model := map[K]int{} // a key's rows
	next := 0            // the next new key's number
	for step := range 40 {
		// 100 to 700 new keys, each on one row or more, the rest of the
		// rows on keys of the last 2,000.
		fresh := 100 + rng.Intn(600)
		b := &joinBatch[K]{keys: make([]K, rows), keyNull: make([]bool, rows), end: rows}
		for i := range b.keys {
			n := next + rng.Intn(fresh)
			if i >= fresh && rng.Intn(3) > 0 {
				n = max(0, next-1-rng.Intn(2000))
			}
			if i < fresh {
				n = next + i
			}
			b.keys[i] = key(n)
			b.keyNull[i] = rng.Intn(50) == 0
		}
		next += fresh
		for i, k := range b.keys {
			if !b.keyNull[i] {
				model[k]++
			}
		}
		if _, err := x.insertRows(b, 0, b.end); err != nil {
			t.Fatal(err)
		}
		if x.len() != len(model) || x.rows != int64(sumRows(model)) {
			t.Fatalf("step %d: %d keys, %d rows; the model %d, %d", step, x.len(), x.rows, len(model), sumRows(model))
		}
		for k, n := range model {
			i := x.find(k)
			if i < 0 || int(x.slab.at(i).live) != n {
				t.Fatalf("step %d: key %v at slot %d, the model has %d rows", step, k, i, n)
			}
		}
		if slots := joinIndexSlots(&x); slots >= 4*x.len() {
			t.Fatalf("step %d: %d slots for %d keys (%.1f a key); want under 4", step, slots, x.len(), float64(slots)/float64(x.len()))
		}
	}
}

func sumRows[K comparable](m map[K]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
