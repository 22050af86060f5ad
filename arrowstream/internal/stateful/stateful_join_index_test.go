package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// fixedTestKey and bytesTestKey make the join key numbered n of each
// kind the index takes: a fixed key's word (spread over the high bits
// too), an encoded key's bytes (of varying length, empty included).
func fixedTestKey(n int) uint64 { return uint64(n) * 0x9e3779b97f4a7c15 }

func bytesTestKey(n int) string {
	if n == 0 {
		return ""
	}
	return strings.Repeat("k", n%5) + strconv.Itoa(n)
}

// TestJoinKeyIndexInsertRowsMatchesModel: batches indexed at once
// (insertRows, with null keys, batches numbered from a base and indexed
// from a row past it, keys with one to hundreds of rows in a batch) give
// every key the rows, in order, of a model that appends them one by one;
// the bytes insertRows reports are the model's (joinKeyOverhead and the
// key's bytes per key indexed first, joinRowBytes a row); each visits
// exactly the model's keys; the key table stays under four slots a key.
func TestJoinKeyIndexInsertRowsMatchesModel(t *testing.T) {
	t.Run("fixed", func(t *testing.T) { testJoinKeyIndexInsertRows(t, fixedTestKey) })
	t.Run("bytes", func(t *testing.T) { testJoinKeyIndexInsertRows(t, bytesTestKey) })
}

func testJoinKeyIndexInsertRows[K joinKey](t *testing.T, key func(int) K) {
	rng := rand.New(rand.NewSource(11))
	x := newJoinKeyIndex[K]()
	model := map[K][]joinRef[K]{}
	for step := range 300 {
		n := rng.Intn(400)
		space := 1 + rng.Intn(200)
		b := &joinBatch[K]{base: int32(rng.Intn(50)), keys: make([]K, n), keyNull: make([]bool, n)}
		b.end = b.base + int32(n)
		for i := range b.keys {
			b.keys[i] = key(rng.Intn(space))
			b.keyNull[i] = rng.Intn(15) == 0
		}
		from := b.base
		if n > 0 && rng.Intn(3) == 0 {
			from += int32(rng.Intn(n))
		}
		var want int64
		for r := from; r < b.end; r++ {
			k := r - b.base
			if b.keyNull[k] {
				continue
			}
			if _, ok := model[b.keys[k]]; !ok {
				want += joinKeyOverhead + keyBytes(b.keys[k])
			}
			want += joinRowBytes
			model[b.keys[k]] = append(model[b.keys[k]], joinRef[K]{b, r})
		}
		if got, err := x.insertRows(b, from, b.end); err != nil || got != want {
			t.Fatalf("step %d: insertRows reports %d bytes (%v), the model %d", step, got, err, want)
		}
		if x.len() != len(model) {
			t.Fatalf("step %d: %d keys, want %d", step, x.len(), len(model))
		}
		// Sized for the keys, not the rows: under four slots a key past
		// the first table's 16.
		if slots := joinIndexSlots(&x); slots > 16 && slots >= 4*x.len() {
			t.Fatalf("step %d: %d slots for %d keys", step, slots, x.len())
		}
		for mk, want := range model {
			kr := x.get(mk)
			if kr == nil || !slices.Equal(kr.refs, want) || int(kr.live) != len(want) {
				t.Fatalf("step %d: key %v has %v, want %v", step, mk, kr, want)
			}
		}
		seen := 0
		x.each(func(k K, s *joinKeySlot[K]) {
			seen++
			if want, ok := model[k]; !ok || int(s.live) != len(want) || int(s.n) != len(want) {
				t.Fatalf("step %d: each visits key %v with %d rows, the model has %d (%v)", step, k, s.live, len(want), ok)
			}
		})
		if seen != len(model) {
			t.Fatalf("step %d: each visits %d keys, want %d", step, seen, len(model))
		}
	}
}

// TestJoinSideIndexMatchesModel: a join side fed batches of random keys
// (some null, some hot) and, as the operator does, evicting by a rising
// watermark (rows evicted in batches' time order, batches dropped and
// compacted) or never evicting and merging its tail, indexing its new
// batches at once or leaving them pending for probes to scan, restarted
// now and then from its batches' live rows as a load from the store
// rebuilds it, and with few row numbers so that the index renumbers
// often: after every step every key's chain holds exactly its live rows
// (in number order, no row twice, the slot's counts right, the side's
// bytes its batches' and index's), and probes of random keys find
// exactly the pairs of a brute-force model.
func TestJoinSideIndexMatchesModel(t *testing.T) {
	for _, evicting := range []bool{true, false} {
		t.Run(fmt.Sprintf("fixed/evicting=%v", evicting), func(t *testing.T) {
			testJoinSideIndexModel(t, evicting, fixedTestKey, func(r *sideRows, k []uint64) { r.words = k })
		})
		t.Run(fmt.Sprintf("bytes/evicting=%v", evicting), func(t *testing.T) {
			testJoinSideIndexModel(t, evicting, bytesTestKey, func(r *sideRows, k []string) { r.keys = k })
		})
	}
}

// modelRow is a stored row of the model: its value (unique), key and
// eviction time.
type modelRow[K joinKey] struct {
	v    int64
	key  K
	null bool
	time int64
}

func testJoinSideIndexModel[K joinKey](t *testing.T, evicting bool, key func(int) K, setKeys func(*sideRows, []K)) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(5))
	side := newJoinSideLive[K]()
	if evicting {
		// Few numbers: renumbered every few batches. (A side that
		// never evicts would run out.)
		side.index.maxNumber = 4096
	}
	defer func() { side.release() }()
	model := map[int64]modelRow[K]{}
	var nextV, thr, id int64
	var renumbers, restarts, merges int
	newBatch := func(rows []modelRow[K]) *joinBatch[K] {
		vb := array.NewInt64Builder(mem)
		b := &joinBatch[K]{id: uint64(id), end: int32(len(rows)), keys: make([]K, len(rows)), keyNull: make([]bool, len(rows))}
		id++
		if evicting {
			b.times = make([]int64, len(rows))
		}
		for j, r := range rows {
			vb.Append(r.v)
			b.keys[j], b.keyNull[j] = r.key, r.null
			if evicting {
				b.times[j] = r.time
			}
		}
		col := vb.NewArray()
		vb.Release()
		b.rec = array.NewRecord(mergeTestSchema, []arrow.Array{col}, int64(len(rows)))
		col.Release()
		return b
	}
	for step := range 500 {
		switch op := rng.Intn(10); {
		case op < 4: // a new batch
			n := 1 + rng.Intn(300)
			space := 1 + rng.Intn(400)
			rows := make([]modelRow[K], n)
			for j := range rows {
				k := rng.Intn(space)
				if rng.Intn(3) == 0 {
					k = rng.Intn(4) // hot keys: long chains
				}
				rows[j] = modelRow[K]{v: nextV, key: key(k), null: rng.Intn(15) == 0, time: thr + 1 + int64(rng.Intn(200))}
				if rng.Intn(60) == 0 {
					rows[j].time = noEvictTime
				}
				nextV++
				model[rows[j].v] = rows[j]
			}
			if evicting {
				sort.SliceStable(rows, func(a, b int) bool { return rows[a].time < rows[b].time })
			}
			b := newBatch(rows)
			side.addPending(b)
			if rng.Intn(2) == 0 {
				side.indexPending()
			}
		case op < 6 && evicting: // the watermark rises
			thr += int64(rng.Intn(100))
			for side.due.due(thr) {
				b := side.due.pop().v
				if b.rec == nil {
					continue
				}
				side.evict(b, thr)
				if b.cursor >= b.end {
					side.drop(b)
					continue
				}
				side.schedule(b)
				if rng.Intn(3) == 0 {
					if err := side.compact(mem, b); err != nil {
						t.Fatal(err)
					}
				}
			}
			for v, r := range model {
				if r.time <= thr {
					delete(model, v)
				}
			}
			side.changes = side.changes[:0]
		case op < 6: // the tail merges
			side.indexPending()
			m, err := side.mergeTail(mem)
			if err != nil {
				t.Fatal(err)
			}
			merges += m
		case op == 6 && rng.Intn(4) == 0: // a restart: the side rebuilt from its batches
			renumbers += side.index.renumbers
			side = restartJoinSide(t, mem, side, !evicting)
			restarts++
		default: // a probe
			m := 1 + rng.Intn(40)
			probe := make([]K, m)
			f := &sideRows{keyNull: make([]bool, m), excluded: make([]bool, m)}
			for j := range probe {
				probe[j] = key(rng.Intn(400))
				if rng.Intn(2) == 0 {
					probe[j] = key(rng.Intn(4))
				}
				f.keyNull[j] = rng.Intn(20) == 0
				f.excluded[j] = rng.Intn(20) == 0
			}
			setKeys(f, probe)
			lp := &joinLivePart[K]{sides: [2]*joinSideLive[K]{newJoinSideLive[K](), side}}
			var got []string
			for _, sg := range candidatesOK(lp, [2]*sideRows{f, {}}, [2][]K{probe, nil}) {
				col := sg.r.rec.Column(0).(*array.Int64)
				for k, j := range sg.li {
					got = append(got, fmt.Sprint(j, col.Value(int(sg.ri[k]))))
				}
			}
			var want []string
			for j, k := range probe {
				if f.keyNull[j] || f.excluded[j] {
					continue
				}
				for _, r := range model {
					if !r.null && r.key == k {
						want = append(want, fmt.Sprint(j, r.v))
					}
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: probe finds %d pairs %v, the model %d %v", step, len(got), got, len(want), want)
			}
		}
		checkJoinSideIndex(t, step, side, model)
	}
	renumbers += side.index.renumbers
	t.Logf("%d restarts, %d renumberings, %d merges", restarts, renumbers, merges)
	if restarts == 0 || (evicting && renumbers == 0) || (!evicting && merges == 0) {
		t.Fatal("the test does not cover restarts, renumbering or merges")
	}
}

// restartJoinSide rebuilds side from its batches' live rows, as a load
// from the store does (each batch as stored, its cursor kept, added in id
// order and, for a side that merges, its tail merged after each), and
// releases it.
func restartJoinSide[K joinKey](t *testing.T, mem memory.Allocator, side *joinSideLive[K], merges bool) *joinSideLive[K] {
	t.Helper()
	bs := slices.Clone(side.batches)
	sort.Slice(bs, func(a, b int) bool { return bs[a].id < bs[b].id })
	fresh := newJoinSideLive[K]()
	fresh.index.maxNumber = side.index.maxNumber
	for _, b := range bs {
		if b.cursor >= b.end {
			continue
		}
		b.rec.Retain()
		nb := &joinBatch[K]{id: b.id, rec: b.rec, base: b.base, end: b.end, cursor: b.cursor,
			keys: slices.Clone(b.keys), keyNull: slices.Clone(b.keyNull)}
		if b.times != nil {
			nb.times = slices.Clone(b.times)
		}
		fresh.add(nb)
		if merges {
			if _, err := fresh.mergeTail(mem); err != nil {
				t.Fatal(err)
			}
		}
	}
	side.release()
	return fresh
}

// checkJoinSideIndex: every key's chain holds exactly the model's live
// rows of the key that the side indexed (pending batches' rows are not),
// in ascending numbers, the slot's counts match its chain, the index's
// ranges are of the side's indexed batches, and the side's bytes are its
// batches' and its index's.
func checkJoinSideIndex[K joinKey](t *testing.T, step int, side *joinSideLive[K], model map[int64]modelRow[K]) {
	t.Helper()
	x := &side.index
	want := map[K]map[int64]bool{}
	var live int64
	for _, b := range side.batches {
		live += int64(b.live())
		if !b.indexed {
			continue
		}
		col := b.rec.Column(0).(*array.Int64)
		for r := b.cursor; r < b.end; r++ {
			k := r - b.base
			if b.keyNull[k] {
				continue
			}
			v := col.Value(int(k))
			if mr, ok := model[v]; !ok || mr.key != b.keys[k] {
				t.Fatalf("step %d: batch %d holds row %d, the model %v (%v)", step, b.id, v, mr, ok)
			}
			if want[b.keys[k]] == nil {
				want[b.keys[k]] = map[int64]bool{}
			}
			want[b.keys[k]][v] = true
		}
	}
	if live != side.rows || live != int64(len(model)) {
		t.Fatalf("step %d: batches hold %d live rows, the side counts %d, the model %d", step, live, side.rows, len(model))
	}
	if x.len() != len(want) {
		t.Fatalf("step %d: %d keys indexed, want %d", step, x.len(), len(want))
	}
	bytes := int64(0)
	for _, b := range side.batches {
		bytes += b.bytes
	}
	var rows int64
	x.each(func(k K, s *joinKeySlot[K]) {
		bytes += joinKeyOverhead + keyBytes(k) + int64(s.live)*joinRowBytes
		rows += int64(s.live)
		got := map[int64]bool{}
		n, last := int32(0), int32(-1)
		for g := s.head; g >= 0; g = x.links.at(g) {
			if g <= last {
				t.Fatalf("step %d key %v: chain not ascending (%d after %d)", step, k, g, last)
			}
			last = g
			n++
			b, row := x.locate(g)
			if b == nil || row < b.cursor {
				continue
			}
			if b.keyNull[row-b.base] || b.keys[row-b.base] != k {
				t.Fatalf("step %d key %v: chain holds row %d of batch %d with key %v", step, k, row, b.id, b.keys[row-b.base])
			}
			v := b.rec.Column(0).(*array.Int64).Value(int(row - b.base))
			if got[v] {
				t.Fatalf("step %d key %v: row %d chained twice", step, k, v)
			}
			got[v] = true
		}
		if n != s.n || last != s.tail || int(s.live) != len(got) {
			t.Fatalf("step %d key %v: chain of %d rows ending at %d, %d live; slot says %d, %d, %d", step, k, n, last, len(got), s.n, s.tail, s.live)
		}
		if len(got) != len(want[k]) {
			t.Fatalf("step %d key %v: index finds %d rows, model %d", step, k, len(got), len(want[k]))
		}
		for v := range got {
			if !want[k][v] {
				t.Fatalf("step %d key %v: index finds row %d, not the key's", step, k, v)
			}
		}
	})
	// The ranges are of the side's indexed batches with rows, in order.
	held := map[*joinBatch[K]]bool{}
	for _, b := range side.batches {
		held[b] = b.indexed
	}
	for j, sp := range x.spans {
		if !held[sp.b] || (j > 0 && sp.start < x.spans[j-1].b.gid+x.spans[j-1].b.end) {
			t.Fatalf("step %d: range %d (batch %d from %d) is not of an indexed batch of the side, or overlaps the one before", step, j, sp.b.id, sp.start)
		}
	}
	if rows != x.rows {
		t.Fatalf("step %d: slots count %d live rows, the index %d", step, rows, x.rows)
	}
	if bytes != side.bytes {
		t.Fatalf("step %d: side counts %d bytes, its batches and index hold %d", step, side.bytes, bytes)
	}
}
