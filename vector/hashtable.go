package vector

import (
	"bytes"
	"context"
	"math/bits"
	"unsafe"
)

// Open-addressing group tables for hash aggregation.
//
// Both tables map a key to a dense group id (0, 1, 2, ... in order of first
// appearance), so that accumulators can be flat, column-shaped arrays indexed
// by group id. They use linear probing over a power-of-two array of 16-byte
// slots kept at most half full, and grow by doubling. The tables are kept for
// the whole run of an operator (across batches): growing is the only time
// they take fresh memory, which is expensive on these machines.
//
// A slot also counts the rows of its group: the probe has the slot's cache
// line at hand, so COUNT(*) and the "how many non-null values" bookkeeping
// of the other aggregates cost no extra memory access per row.

// groupSlot is one slot of a group table.
type groupSlot struct {
	key  uint64 // the key (fixedTable) or the key's hash (bytesTable)
	gid  uint32 // group id + 1; 0 marks an empty slot
	rows uint32 // the group's rows since the last flushRows
}

// probeChunk is how many rows a probe handles between capacity checks:
// reserving room for a whole chunk of new groups up front keeps the hot loop
// free of growth checks and keeps slot positions stable within the chunk.
const probeChunk = 256

// slotTable is the part shared by both tables: the slots and the row
// counts.
type slotTable struct {
	slots []groupSlot
	shift uint   // 64 - log2(len(slots)): a slot position is hash >> shift
	mask  uint64 // len(slots) - 1
	n     int    // groups
	// The slots count rows in 32 bits. Before 2^32 rows have gone through
	// the table since the last flush (so before any counter could wrap),
	// flushRows moves the counters into carry, by group id; carry stays nil
	// unless the table sees 4 billion rows.
	sinceFlush uint64
	carry      []int64
	// big holds the slots that grew interruptibly (from the allocator's
	// large-buffer cache, when it has one); release returns them.
	big bigMem
	// growCtx, while set (by a grouper's groupContext, for one batch),
	// makes the table grow interruptibly (rehashContext); a cancelled
	// growth leaves the table as it was, records growErr and makes the
	// probe stop.
	growCtx context.Context
	growErr error
	// growReserve, when set (by the HashAggregate that owns the grouper),
	// is asked for the bytes a growth adds before it is made, so that a
	// growth past the query's memory limit is refused without mapping,
	// faulting and rehashing a table that would be refused right after.
	growReserve func(delta int64) error
}

const minTableSlots = 1 << 8

func (t *slotTable) init() {
	t.slots = freshSlots[groupSlot](minTableSlots)
	t.shift = uint(64 - bits.TrailingZeros(minTableSlots))
	t.mask = minTableSlots - 1
}

// needsGrow reports whether adding extra more groups could push the load
// factor past one half.
func (t *slotTable) needsGrow(extra int) bool { return 2*(t.n+extra) > len(t.slots) }

// rehash moves every slot into a table of newLen slots; pos gives the home
// position of a slot's key for the new shift.
func (t *slotTable) rehash(newLen int, pos func(key uint64, shift uint) uint64) {
	old := t.slots
	t.slots = freshSlots[groupSlot](newLen)
	t.shift = uint(64 - bits.TrailingZeros(uint(newLen)))
	t.mask = uint64(newLen - 1)
	for _, s := range old {
		if s.gid == 0 {
			continue
		}
		p := pos(s.key, t.shift)
		for t.slots[p].gid != 0 {
			p = (p + 1) & t.mask
		}
		t.slots[p] = s
	}
}

// grow rehashes into newLen slots, interruptibly while growCtx is set (and
// then only once growReserve, if set, accepted the added bytes); it
// returns false when that growth was cancelled or refused (growErr says why; the
// table is unchanged and the caller must stop probing).
func (t *slotTable) grow(newLen int, pos func(key uint64, shift uint) uint64) bool {
	if t.growCtx == nil {
		t.rehash(newLen, pos)
		return true
	}
	if t.growReserve != nil {
		if err := t.growReserve(int64(newLen-len(t.slots)) * int64(unsafe.Sizeof(groupSlot{}))); err != nil {
			t.growErr = err
			return false
		}
	}
	if err := t.rehashContext(t.growCtx, newLen, pos); err != nil {
		t.growErr = err
		return false
	}
	return true
}

// withContext runs probe with the table growing interruptibly on ctx and
// returns the cancellation that stopped a growth, if any, else probe's
// error.
func (t *slotTable) withContext(ctx context.Context, probe func() error) error {
	t.growCtx, t.growErr = ctx, nil
	err := probe()
	if t.growErr != nil {
		err = t.growErr
	}
	t.growCtx, t.growErr = nil, nil
	return err
}

// rehashContext is rehash made interruptible: the new slots come from
// bigAlloc (made a megabyte at a time with ctx checks) and the slots move
// cancelCheckRows at a time with ctx checked between. On cancellation the
// table is left as it was.
func (t *slotTable) rehashContext(ctx context.Context, newLen int, pos func(key uint64, shift uint) uint64) error {
	slots, err := bigAlloc[groupSlot](ctx, &t.big, newLen)
	if err != nil {
		return err
	}
	touchSlots(slots)
	shift := uint(64 - bits.TrailingZeros(uint(newLen)))
	mask := uint64(newLen - 1)
	for lo := 0; lo < len(t.slots); lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			bigFree(&t.big, slots)
			return err
		}
		for _, s := range t.slots[lo:min(lo+cancelCheckRows, len(t.slots))] {
			if s.gid == 0 {
				continue
			}
			p := pos(s.key, shift)
			for slots[p&mask].gid != 0 {
				p++
			}
			slots[p&mask] = s
		}
	}
	bigFree(&t.big, t.slots)
	t.slots, t.shift, t.mask = slots, shift, mask
	return nil
}

// release returns the slots reserveContext made, if any; the table must
// not be used afterwards.
func (t *slotTable) release() {
	if len(t.big.maps) == 0 {
		return
	}
	t.slots = nil
	t.big.release()
}

// grownLen is the slot count that keeps n+extra groups at most half full.
func (t *slotTable) grownLen(extra int) int {
	l := len(t.slots)
	for 2*(t.n+extra) > l {
		l *= 2
	}
	return l
}

// rowCountLimit is when flushRows must run; a variable so that tests can
// exercise the flush.
var rowCountLimit uint64 = 1 << 32

// countRows notes that n rows are about to be counted in the slots.
func (t *slotTable) countRows(n int) {
	if t.sinceFlush+uint64(n) >= rowCountLimit {
		t.flushRows()
	}
	t.sinceFlush += uint64(n)
}

// flushRows moves the slots' row counters into carry.
func (t *slotTable) flushRows() {
	t.carry = growZero(t.carry, t.n)
	for i := range t.slots {
		s := &t.slots[i]
		if s.gid != 0 {
			t.carry[s.gid-1] += int64(s.rows)
			s.rows = 0
		}
	}
	t.sinceFlush = 0
}

// rowCounts writes the row count of every group into rows (len >= n).
func (t *slotTable) rowCounts(rows []int64) { _ = t.rowCountsContext(context.Background(), rows) }

// fixedHash spreads a 64-bit key over the high bits, which pick the slot:
// folding the high half in first keeps keys that differ only in their high
// bits apart; one multiply is cheaper than a full fmix64.
func fixedHash(k uint64) uint64 { return (k ^ k>>32) * 0x9e3779b97f4a7c15 }

// fixedTable maps 64-bit keys to group ids. The null key is kept outside the
// slots (nullGid) so that every 64-bit value stays usable as a key.
type fixedTable struct {
	slotTable
	nullGid  int32 // -1 until a null key is seen
	nullRows int64
}

func newFixedTable() *fixedTable {
	t := &fixedTable{nullGid: -1}
	t.init()
	return t
}

func fixedPos(key uint64, shift uint) uint64 { return fixedHash(key) >> shift }

// reserve makes room for extra more groups; false: a cancelled growth
// (see grow).
func (t *fixedTable) reserve(extra int) bool {
	if t.needsGrow(extra) {
		return t.grow(t.grownLen(extra), fixedPos)
	}
	return true
}

// insert creates the group of key k in the empty slot p.
func (t *fixedTable) insert(p uint64, k uint64) int32 {
	gid := int32(t.n)
	t.n++
	t.slots[p] = groupSlot{key: k, gid: uint32(gid) + 1, rows: 1}
	return gid
}

// nullGroup returns the group of the null key, creating it on first use,
// and counts one row for it.
func (t *fixedTable) nullGroup() int32 {
	if t.nullGid < 0 {
		t.nullGid = int32(t.n)
		t.n++
	}
	t.nullRows++
	return t.nullGid
}

// fixedKey is the set of Go types whose values serve directly as fixed
// keys; they are sign-extended to 64 bits.
type fixedKey interface {
	~int32 | ~int64 | ~uint64
}

// probeFixed assigns the group of keys[i] to gids[i], creating groups for
// keys not seen before. Every key is valid (not null).
//
// It works in two passes per chunk of rows. The first looks at every key's
// home slot only, without branches on the loaded data: the loads are
// independent, so the CPU overlaps their cache misses, which decide the
// speed once the table outgrows the caches. It settles the hits (most rows,
// with the table at most half full) and lists the rest, which the second
// pass probes fully and inserts, with their slots' lines now cached.
func probeFixed[K fixedKey](t *fixedTable, keys []K, gids []int32) {
	gids = gids[:len(keys)]
	t.countRows(len(keys))
	var miss [probeChunk]int32
	for start := 0; start < len(keys); start += probeChunk {
		end := min(start+probeChunk, len(keys))
		if !t.reserve(end - start) {
			return
		}
		slots, shift, mask := t.slots, t.shift, t.mask
		chunk, out := keys[start:end], gids[start:end]
		out = out[:len(chunk)]
		nm := 0
		for j, key := range chunk {
			k := uint64(int64(key))
			s := &slots[(fixedHash(k)>>shift)&mask]
			hit := uint32(0)
			if s.key == k {
				hit = 1
			}
			if s.gid == 0 {
				hit = 0
			}
			s.rows += hit
			out[j] = int32(s.gid) - 1
			miss[nm&(probeChunk-1)] = int32(j)
			nm += int(hit ^ 1)
		}
		for _, j := range miss[:nm] {
			k := uint64(int64(chunk[j]))
			p := fixedHash(k) >> shift
			for {
				s := &slots[p&mask]
				if s.key == k && s.gid != 0 {
					s.rows++
					out[j] = int32(s.gid - 1)
					break
				}
				if s.gid == 0 {
					out[j] = t.insert(p&mask, k)
					break
				}
				p++
			}
		}
	}
}

// probeFixedNullable is probeFixed for keys with a validity bitmap (bit
// off+i set for a valid key); null keys go to the null group.
func probeFixedNullable[K fixedKey](t *fixedTable, keys []K, valid []byte, off int, gids []int32) {
	gids = gids[:len(keys)]
	t.countRows(len(keys))
	for start := 0; start < len(keys); start += probeChunk {
		end := min(start+probeChunk, len(keys))
		if !t.reserve(end - start) {
			return
		}
		slots, shift, mask := t.slots, t.shift, t.mask
		for i := start; i < end; i++ {
			if valid[(off+i)>>3]&(1<<((off+i)&7)) == 0 {
				gids[i] = t.nullGroup()
				continue
			}
			k := uint64(int64(keys[i]))
			p := fixedHash(k) >> shift
			for {
				s := &slots[p&mask]
				if s.key == k && s.gid != 0 {
					s.rows++
					gids[i] = int32(s.gid - 1)
					break
				}
				if s.gid == 0 {
					gids[i] = t.insert(p&mask, k)
					break
				}
				p++
			}
		}
	}
}

// probeFixedMasked is probeFixed with a per-row null flag (as KeyEncoder
// gives it).
func probeFixedMasked(t *fixedTable, keys []uint64, nulls []bool, gids []int32) {
	if nulls == nil {
		probeFixed(t, keys, gids)
		return
	}
	gids = gids[:len(keys)]
	for start := 0; start < len(keys); start += probeChunk {
		end := min(start+probeChunk, len(keys))
		if !t.reserve(end - start) {
			return
		}
		for i := start; i < end; i++ {
			if nulls[i] {
				gids[i] = t.nullGroup()
				continue
			}
			probeFixed(t, keys[i:i+1], gids[i:i+1])
		}
	}
}

// finish returns the key words by group id, the null flags by group id (nil
// without a null group) and the row counts by group id.
func (t *fixedTable) finish() (words []uint64, nulls []bool, rows []int64) {
	words, nulls, rows, _ = t.finishContext(context.Background())
	return words, nulls, rows
}

// bytesTable maps byte-string keys (KeyEncoder's normalized keys) to group
// ids. Slots hold the key's hash; the keys themselves live in one arena in
// group order, so decoding the keys of a range of groups reads them in
// order.
type bytesTable struct {
	slotTable
	arena []byte
	offs  []int // group g's key is arena[offs[g]:offs[g+1]]
}

func newBytesTable() *bytesTable {
	t := &bytesTable{offs: []int{0}}
	t.init()
	return t
}

func hashPos(key uint64, shift uint) uint64 { return key >> shift }

// probe assigns the group of every row of the encoder's last batch.
func (t *bytesTable) probe(enc *KeyEncoder, gids []int32) {
	hashes := enc.Hashes()
	gids = gids[:len(hashes)]
	if len(hashes) > 0 && !t.reserveKeys(int(enc.offs[len(hashes)]-enc.offs[0]), len(hashes)) {
		return
	}
	t.countRows(len(hashes))
	for start := 0; start < len(hashes); start += probeChunk {
		end := min(start+probeChunk, len(hashes))
		if t.needsGrow(end-start) && !t.grow(t.grownLen(end-start), hashPos) {
			return
		}
		slots, shift, mask := t.slots, t.shift, t.mask
		for i := start; i < end; i++ {
			h := hashes[i]
			key := enc.Key(i)
			p := h >> shift
			for {
				s := &slots[p&mask]
				if s.gid == 0 {
					gid := uint32(t.n)
					t.n++
					t.arena = append(t.arena, key...)
					t.offs = append(t.offs, len(t.arena))
					*s = groupSlot{key: h, gid: gid + 1, rows: 1}
					gids[i] = int32(gid)
					break
				}
				if s.key == h && bytes.Equal(t.arena[t.offs[s.gid-1]:t.offs[s.gid]], key) {
					s.rows++
					gids[i] = int32(s.gid - 1)
					break
				}
				p++
			}
		}
	}
}

// reserveKeys makes room in the key arena and offsets for keys more
// groups of keyBytes key bytes in all (or fewer), while growCtx is set:
// the arena of millions of keys would otherwise grow by append, copying
// it whole in one step. The copy checks growCtx every growChunkBytes; on
// cancellation it records growErr, leaves the arena as it was and returns
// false (as after a cancelled growth, the caller stops).
func (t *bytesTable) reserveKeys(keyBytes, keys int) bool {
	if t.growCtx == nil {
		return true
	}
	if t.growErr != nil {
		return false
	}
	arena, err := growCapContext(t.growCtx, t.arena, len(t.arena)+keyBytes)
	if err == nil {
		t.arena = arena
		var offs []int
		offs, err = growCapContext(t.growCtx, t.offs, len(t.offs)+keys)
		if err == nil {
			t.offs = offs
			return true
		}
	}
	t.growErr = err
	return false
}

// key returns the key bytes of group g.
func (t *bytesTable) key(g int) []byte { return t.arena[t.offs[g]:t.offs[g+1]] }

// insertKey adds key (hash h) unless present and returns its group; it
// counts no rows. DISTINCT uses the table as a set this way.
//
// While growCtx is set the table grows interruptibly (grow); a cancelled
// growth records growErr, for the caller to return at the end of its
// batch, and the key goes in anyway: the table is only more loaded, and it
// grows in one step before it could fill up.
func (t *bytesTable) insertKey(h uint64, key []byte) (gid int32, added bool) {
	if t.needsGrow(1) && !t.grow(t.grownLen(1), hashPos) && 4*(t.n+1) > 3*len(t.slots) {
		t.rehash(t.grownLen(1), hashPos)
	}
	p := h >> t.shift
	for {
		s := &t.slots[p&t.mask]
		if s.gid == 0 {
			g := uint32(t.n)
			t.n++
			if len(t.arena)+len(key) > cap(t.arena) || len(t.offs) == cap(t.offs) {
				t.reserveKeys(len(key), 1) // a cancel is in growErr; append grows then
			}
			t.arena = append(t.arena, key...)
			t.offs = append(t.offs, len(t.arena))
			*s = groupSlot{key: h, gid: g + 1, rows: 1}
			return int32(g), true
		}
		if s.key == h && bytes.Equal(t.key(int(s.gid-1)), key) {
			return int32(s.gid - 1), false
		}
		p++
	}
}
