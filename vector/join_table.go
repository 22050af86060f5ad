package vector

import (
	"bytes"
	"context"
	"math/bits"
	"unsafe"
)

// joinSlot is one entry of the build table. A key with one build row (the
// common case of a foreign-key join) stores the row inline, so that a probe
// hit costs one slot read; a key with several rows points at its run in
// joinTable.rows.
type joinSlot struct {
	key uint64 // the key word (fixed keys) or the key's hash (byte keys)
	a   int32  // n == 1: the build row; n > 1: the start of its run in rows
	n   int32  // build rows with this key; 0 marks an empty slot
}

// joinTable is the build side of a hash join: an open-addressing table
// (linear probing, power-of-two size, load factor <= 1/2) from join key to
// the build rows with that key, in a CSR layout: the rows of a key are
// contiguous and ascending in rows, so a probe with many matches reads one
// run rather than chasing a chain through a next array. Measured on 64K
// build rows, expanding matches into pairs was 1.3x (1 row per key), 1.6x
// (4) and 2x (16 and 64) faster than with head/next chains, and the build
// rows come out grouped for the gather.
//
// Fixed keys (KeyEncoder.IsFixed) compare their 64-bit words; byte keys
// compare hashes first and then the normalized bytes of the key's first build
// row, read back from the build encoder.
type joinTable struct {
	fixed bool
	slots []joinSlot // len mask+2: the last slot is the null key's (nullSlot)
	mask  uint64
	rows  []int32
	enc   *KeyEncoder // the build keys (byte path); not encoded again

	// dense, when set, replaces the slots for fixed keys whose words span a
	// small range (ids, dates, small enums): dense[w-denseMin] is the key's
	// (a, n). A probe is then one predictable load instead of a hash and a
	// probe sequence whose length the branch predictor cannot guess.
	dense    []denseEntry
	denseMin uint64

	// big holds the table's large buffers (slots, rows, dense), mapped
	// outside the Go heap and faulted in with context checks (bigAlloc),
	// so that making a table of millions of rows does not hold up a
	// cancel; release returns them.
	big bigMem
}

// release returns the table's mapped buffers; the table is empty after.
func (t *joinTable) release() {
	t.big.release()
	*t = joinTable{}
}

type denseEntry struct{ a, n int32 }

// denseLimit is the largest span of key words given a dense array for n
// distinct keys: up to 8 entries (64 bytes) per key, the memory the slots
// would take at their lowest load, and always at least 32 KiB.
func denseLimit(keys int) uint64 { return uint64(max(8*keys, 4096)) }

// nullSlot is the index of the slot that collects build rows whose fixed
// key is null, for null-safe (<=>) joins: the fixed path gives a null key
// the word 0, which must not meet the value 0.
func (t *joinTable) nullSlot() int { return len(t.slots) - 1 }

// build inserts the n rows encoded by enc. Rows with exclude[r] set (a null
// in a key that is not null-safe) are left out; exclude may be nil. With
// nullSafe, fixed-path rows with a null key go to the null slot.
// It checks ctx every cancelCheckRows rows.
func (t *joinTable) build(ctx context.Context, enc *KeyEncoder, exclude []bool, nullSafe bool) error {
	n := enc.Len()
	size := tableSize(n)
	t.fixed, t.enc = enc.IsFixed(), enc
	var err error
	if t.slots, err = bigAlloc[joinSlot](ctx, &t.big, size+1); err != nil {
		return err
	}
	t.mask = uint64(size - 1)
	hashes := enc.Hashes()
	var words []uint64
	if t.fixed {
		words = enc.Fixed()
	}
	// Pass 1: find every row's slot and count the rows per key. While
	// counting, a holds the key's first row (byte keys compare with it).
	slotOf, err := bigAlloc[int32](ctx, &t.big, n)
	if err != nil {
		return err
	}
	defer bigFree(&t.big, slotOf)
	for r := 0; r < n; r++ {
		if r%cancelCheckRows == cancelCheckRows-1 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if exclude != nil && exclude[r] {
			slotOf[r] = -1
			continue
		}
		var s int
		switch {
		case t.fixed && nullSafe && enc.HasNull(r):
			s = t.nullSlot()
		case t.fixed:
			s = t.findFixed(words[r], hashes[r])
		default:
			s = t.findBytes(enc, r, hashes[r])
		}
		sl := &t.slots[s]
		if sl.n == 0 {
			sl.a = int32(r)
			if t.fixed {
				sl.key = words[r]
			} else {
				sl.key = hashes[r]
			}
		}
		sl.n++
		slotOf[r] = int32(s)
	}
	// Pass 2: give each key with several rows a run, pointing a at its end.
	total := int32(0)
	for s := range t.slots {
		if s%(4*cancelCheckRows) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if sl := &t.slots[s]; sl.n > 1 {
			total += sl.n
			sl.a = total
		}
	}
	// Pass 3: fill the runs backwards so that each ends up ascending.
	if t.rows, err = bigAlloc[int32](ctx, &t.big, int(total)); err != nil {
		return err
	}
	for r := n - 1; r >= 0; r-- {
		if r%cancelCheckRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		s := slotOf[r]
		if s < 0 {
			continue
		}
		if sl := &t.slots[s]; sl.n > 1 {
			sl.a--
			t.rows[sl.a] = int32(r)
		}
	}
	if t.fixed {
		return t.makeDense(ctx)
	}
	return nil
}

// heapBytes is the Go-heap memory of the table (the encoder's is counted
// by its owner).
func (t *joinTable) heapBytes() int64 {
	return sliceBytes(t.slots) + sliceBytes(t.rows) + sliceBytes(t.dense)
}

// buildBytes estimates the peak Go-heap memory of building a table of n
// rows: the slots, the per-row slot index and the runs.
func buildBytes(n int) int64 {
	return int64(tableSize(n)+1)*int64(unsafe.Sizeof(joinSlot{})) + 8*int64(n)
}

// makeDense sets up dense when the fixed keys' words span a small range,
// compared as signed integers (the encoder sign-extends integers).
func (t *joinTable) makeDense(ctx context.Context) error {
	lo, hi, keys := int64(0), int64(0), 0
	for _, sl := range t.slots[:t.nullSlot()] {
		if sl.n == 0 {
			continue
		}
		w := int64(sl.key)
		if keys == 0 || w < lo {
			lo = w
		}
		if keys == 0 || w > hi {
			hi = w
		}
		keys++
	}
	if keys == 0 || uint64(hi)-uint64(lo) >= denseLimit(keys) {
		return nil
	}
	dense, err := bigAlloc[denseEntry](ctx, &t.big, int(uint64(hi)-uint64(lo)+1))
	if err != nil {
		return err
	}
	t.denseMin, t.dense = uint64(lo), dense
	for s, sl := range t.slots[:t.nullSlot()] {
		if s%(4*cancelCheckRows) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if sl.n != 0 {
			t.dense[sl.key-t.denseMin] = denseEntry{a: sl.a, n: sl.n}
		}
	}
	return nil
}

// tableSize is the slot count for n build rows: a power of two with a load
// factor of at most 1/4 while the slots fit in 256 KiB (most probes then
// end at the home slot, which keeps probing branch-free), and 1/2 beyond,
// where memory and cache misses cost more than displaced keys.
func tableSize(n int) int {
	const small = 256 << 10 / 16 // slots in 256 KiB
	size := 1 << bits.Len(uint(4*n))
	if size > small {
		size = 1 << bits.Len(uint(2*n))
	}
	return max(size, 8)
}

// findFixed returns the slot holding word w, or the empty slot where it
// belongs.
func (t *joinTable) findFixed(w, h uint64) int {
	s := h & t.mask
	for {
		sl := &t.slots[s]
		if sl.n == 0 || sl.key == w {
			return int(s)
		}
		s = (s + 1) & t.mask
	}
}

// findBytes is findFixed for build row r's byte key (during build, a slot's
// a is its first row).
func (t *joinTable) findBytes(enc *KeyEncoder, r int, h uint64) int {
	s := h & t.mask
	key := enc.Key(r)
	for {
		sl := &t.slots[s]
		if sl.n == 0 || sl.key == h && bytes.Equal(key, enc.Key(int(sl.a))) {
			return int(s)
		}
		s = (s + 1) & t.mask
	}
}

// first returns a slot's first build row.
func (t *joinTable) first(sl *joinSlot) int32 {
	if sl.n == 1 {
		return sl.a
	}
	return t.rows[sl.a]
}

// probeDense is probeFixed for a dense table; it needs no hashes. It
// returns whether every word had exactly one match (a foreign-key join).
func (t *joinTable) probeDense(words []uint64, outA, outN []int32) (allOne bool) {
	dense, lo := t.dense, t.denseMin
	span := uint64(len(dense))
	outA, outN = outA[:len(words)], outN[:len(words)]
	notOne := int32(0)
	for i, w := range words {
		var e denseEntry
		if d := w - lo; d < span {
			e = dense[d]
		}
		outA[i], outN[i] = e.a, e.n
		notOne |= e.n ^ 1
	}
	return notOne == 0
}

// probeFixed looks up every word: outA[i], outN[i] receive the matching
// slot's a and n (n = 0 on a miss). It returns whether every word had
// exactly one match. The first pass reads each word's home slot without
// branching on the outcome and lists the rows whose home slot holds another
// key; only those walk the probe sequence. pending is scratch of len(words).
func (t *joinTable) probeFixed(words, hashes []uint64, outA, outN, pending []int32) (allOne bool) {
	slots, mask := t.slots, t.mask
	hashes = hashes[:len(words)]
	outA, outN, pending = outA[:len(words)], outN[:len(words)], pending[:len(words)]
	notOne := int32(0)
	np := 0
	for i, w := range words {
		sl := slots[hashes[i]&mask]
		outA[i], outN[i] = sl.a, sl.n
		// A displaced row contributes its home slot's n here, and its own
		// below: at worst the result is a false "not all one".
		notOne |= sl.n ^ 1
		pending[np] = int32(i)
		np += b2i(sl.n != 0 && sl.key != w)
	}
	for _, i := range pending[:np] {
		w := words[i]
		s := (hashes[i] + 1) & mask
		for {
			sl := &slots[s]
			if sl.n == 0 || sl.key == w {
				outA[i], outN[i] = sl.a, sl.n
				notOne |= sl.n ^ 1
				break
			}
			s = (s + 1) & mask
		}
	}
	return notOne == 0
}

// b2i is 1 for true; the compiler makes it a flag move, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// probeBytes is probeFixed for byte keys encoded by enc.
func (t *joinTable) probeBytes(enc *KeyEncoder, outA, outN []int32) (allOne bool) {
	slots, mask := t.slots, t.mask
	hashes := enc.Hashes()
	outA, outN = outA[:len(hashes)], outN[:len(hashes)]
	notOne := int32(0)
	for i, h := range hashes {
		s := h & mask
		key := enc.Key(i)
		for {
			sl := &slots[s]
			if sl.n == 0 || sl.key == h && bytes.Equal(key, t.enc.Key(int(t.first(sl)))) {
				outA[i], outN[i] = sl.a, sl.n
				notOne |= sl.n ^ 1
				break
			}
			s = (s + 1) & mask
		}
	}
	return notOne == 0
}

// allRows makes the table a single run of build rows 0..n-1, for joins
// without equi-keys (every probe row meets every build row).
func (t *joinTable) allRows(ctx context.Context, n int) (a, cnt int32, err error) {
	if t.rows, err = bigAlloc[int32](ctx, &t.big, n); err != nil {
		return 0, 0, err
	}
	for i := range t.rows {
		t.rows[i] = int32(i)
	}
	if n == 1 {
		return 0, 1, nil
	}
	return 0, int32(n), nil
}
