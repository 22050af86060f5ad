package stateful

import (
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJoinKeyIndexMatchesModel: random inserts and removals over a small
// key space (so that keys collect from one to dozens of refs, crossing the
// first piece, the carved second piece and heap growth, and removed keys
// come back), checked after every step against a map of slices. Pieces
// carved from one chunk must never see each other's refs.
func TestJoinKeyIndexMatchesModel(t *testing.T) {
	t.Run("fixed", func(t *testing.T) { testJoinKeyIndexMatchesModel(t, fixedTestKey) })
	t.Run("bytes", func(t *testing.T) { testJoinKeyIndexMatchesModel(t, bytesTestKey) })
}

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

func testJoinKeyIndexMatchesModel[K joinKey](t *testing.T, key func(int) K) {
	rng := rand.New(rand.NewSource(7))
	x := newJoinKeyIndex[K]()
	model := map[K][]joinRef[K]{}
	b := &joinBatch[K]{}
	for step := range 20_000 {
		k := key(rng.Intn(300))
		if rng.Intn(40) == 0 {
			x.remove(k)
			delete(model, k)
		} else {
			ref := joinRef[K]{b, int32(step)}
			_, had := model[k]
			if fresh := x.insert(k, ref); fresh == had {
				t.Fatalf("step %d: insert(%v) fresh=%v, key was indexed: %v", step, k, fresh, had)
			}
			model[k] = append(model[k], ref)
		}
		if step%97 != 0 && step < 19_999 {
			continue
		}
		checkJoinKeyIndex(t, step, &x, model)
	}
}

// checkJoinKeyIndex compares x with model: the key count, every model
// key's refs and live count, keys the model lacks are absent, and each
// visits exactly the model's keys.
func checkJoinKeyIndex[K joinKey](t *testing.T, step int, x *joinKeyIndex[K], model map[K][]joinRef[K]) {
	t.Helper()
	if x.len() != len(model) {
		t.Fatalf("step %d: %d keys, want %d", step, x.len(), len(model))
	}
	for mk, want := range model {
		kr := x.get(mk)
		if kr == nil || !slices.Equal(kr.refs, want) || int(kr.live) != len(want) {
			t.Fatalf("step %d: key %v has %v, want %v", step, mk, kr, want)
		}
	}
	seen := 0
	x.each(func(k K, kr *joinKeyRefs[K]) {
		seen++
		if want, ok := model[k]; !ok || !slices.Equal(kr.refs, want) {
			t.Fatalf("step %d: each visits key %v with %d refs, the model has %d (%v)", step, k, len(kr.refs), len(want), ok)
		}
	})
	if seen != len(model) {
		t.Fatalf("step %d: each visits %d keys, want %d", step, seen, len(model))
	}
}

// TestJoinKeyIndexInsertRowsMatchesModel: batches indexed at once
// (insertRows, with null keys, partly evicted batches, keys with one to
// hundreds of rows in a batch) interleaved with single inserts and
// removals give every key the refs, in order, of a model that appends
// them one by one; the bytes insertRows reports are the model's
// (joinKeyOverhead and the key's bytes per key indexed first, a ref's per
// ref); and a key's refs grow at most once per batch: a batch of 2,000
// rows of a key indexed once costs one allocation, not a doubling per
// power of two.
func TestJoinKeyIndexInsertRowsMatchesModel(t *testing.T) {
	t.Run("fixed", func(t *testing.T) { testJoinKeyIndexInsertRows(t, fixedTestKey) })
	t.Run("bytes", func(t *testing.T) { testJoinKeyIndexInsertRows(t, bytesTestKey) })
	testJoinKeyIndexHotKey(t)
}

func testJoinKeyIndexInsertRows[K joinKey](t *testing.T, key func(int) K) {
	rng := rand.New(rand.NewSource(11))
	x := newJoinKeyIndex[K]()
	model := map[K][]joinRef[K]{}
	for step := range 600 {
		switch rng.Intn(6) {
		case 0:
			k := key(rng.Intn(200))
			x.remove(k)
			delete(model, k)
		case 1:
			k := key(rng.Intn(200))
			ref := joinRef[K]{&joinBatch[K]{}, int32(step)}
			x.insert(k, ref)
			model[k] = append(model[k], ref)
		default:
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
				want += joinRefBytes
				model[b.keys[k]] = append(model[b.keys[k]], joinRef[K]{b, r})
			}
			if got := x.insertRows(b, from, b.end); got != want {
				t.Fatalf("step %d: insertRows reports %d bytes, the model %d", step, got, want)
			}
		}
		checkJoinKeyIndex(t, step, &x, model)
	}
}

// testJoinKeyIndexHotKey: 2,000 rows of one key indexed at once grow its
// refs once.
func testJoinKeyIndexHotKey(t *testing.T) {
	// One hot key: its refs grow once for the batch.
	hot := newJoinKeyIndex[uint64]()
	hot.insert(7, joinRef[uint64]{&joinBatch[uint64]{}, 0})
	b := &joinBatch[uint64]{keys: make([]uint64, 2000), keyNull: make([]bool, 2000), end: 2000}
	for i := range b.keys {
		b.keys[i] = 7
	}
	hot.insertRows(b, 0, 10) // warm the scratch
	allocs := testing.AllocsPerRun(20, func() {
		hot.remove(7)
		hot.insert(7, joinRef[uint64]{b, 0})
		hot.insertRows(b, 0, b.end)
	})
	// The refs' growth, and now and then a new chunk of first refs
	// (appended one by one, 9 or 10).
	if allocs > 2 {
		t.Fatalf("%v allocations to index 2,000 rows of one key", allocs)
	}
}
