package stateful

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestJoinSideLiveEvictCompact: batches of rows sorted by eviction time,
// evicted in steps of a rising threshold and compacted once mostly dead,
// keep a key index that finds exactly the live rows of each key, with the
// values they were stored with (row numbers survive compaction), and the
// live row count and the time index agree with a brute-force model, and
// the side's count of store entries with the entries its changes write.
func TestJoinSideLiveEvictCompact(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(1))
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	side := newJoinSideLive[uint64]()
	defer side.release()
	type row struct {
		key  uint64
		time int64
		v    int64
	}
	var model []row
	next := int64(0)
	compacted := 0
	thr := int64(0)
	stored := map[[2]uint64]bool{} // (batch id, 0: rows / 1: meta)
	for epoch := 0; epoch < 40; epoch++ {
		n := 200 + rng.Intn(3000)
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{key: uint64(rng.Intn(50)), time: thr + 1 + int64(rng.Intn(5000)), v: next}
			next++
		}
		sort.Slice(rows, func(a, b int) bool { return rows[a].time < rows[b].time })
		b := array.NewInt64Builder(mem)
		keys, times := make([]uint64, n), make([]int64, n)
		for i, r := range rows {
			b.Append(r.v)
			keys[i], times[i] = r.key, r.time
		}
		col := b.NewArray()
		b.Release()
		rec := array.NewRecord(schema, []arrow.Array{col}, int64(n))
		col.Release()
		nb := &joinBatch[uint64]{id: uint64(epoch), rec: rec, end: int32(n), keys: keys, keyNull: make([]bool, n), times: times}
		side.add(nb)
		nb.rewrite = true // as the operator does: a new batch is written
		side.mark(nb)
		model = append(model, rows...)

		thr += int64(rng.Intn(300))
		for side.due.due(thr) {
			bt := side.due.pop().v
			if bt.rec == nil {
				continue
			}
			side.evict(bt, thr)
			if bt.cursor >= bt.end {
				delete(stored, [2]uint64{bt.id, 0})
				delete(stored, [2]uint64{bt.id, 1})
				side.drop(bt)
				continue
			}
			side.schedule(bt)
			if bt.shouldCompact() {
				if err := side.compact(mem, bt); err != nil {
					t.Fatal(err)
				}
				compacted++
			}
		}
		// The store's entries (rows, meta) as the changes write them: the
		// side's entry count, which a changelog declares as the store's
		// length, must match.
		for _, c := range side.changed() {
			if c.rec != nil {
				stored[[2]uint64{c.id, 0}] = true
			}
			if c.meta != nil {
				stored[[2]uint64{c.id, 1}] = true
			}
		}
		if side.entries != int64(len(stored)) {
			t.Fatalf("epoch %d: side counts %d store entries, the store holds %d", epoch, side.entries, len(stored))
		}
		live := model[:0]
		for _, r := range model {
			if r.time > thr {
				live = append(live, r)
			}
		}
		model = live
		if side.rows != int64(len(model)) {
			t.Fatalf("epoch %d: %d live rows, model %d", epoch, side.rows, len(model))
		}
		want := map[uint64]map[int64]bool{}
		for _, r := range model {
			if want[r.key] == nil {
				want[r.key] = map[int64]bool{}
			}
			want[r.key][r.v] = true
		}
		for k := uint64(0); k < 50; k++ {
			got := map[int64]bool{}
			if kr := side.index.get(k); kr != nil {
				for _, ref := range kr.refs {
					if !ref.alive() {
						continue
					}
					v := ref.b.rec.Column(0).(*array.Int64).Value(int(ref.row - ref.b.base))
					if got[v] {
						t.Fatalf("epoch %d key %d: row %d indexed twice", epoch, k, v)
					}
					got[v] = true
				}
				if int(kr.live) != len(got) {
					t.Fatalf("epoch %d key %d: live count %d, %d live refs", epoch, k, kr.live, len(got))
				}
			}
			if len(got) != len(want[k]) {
				t.Fatalf("epoch %d key %d: index finds %d rows, model %d", epoch, k, len(got), len(want[k]))
			}
			for v := range want[k] {
				if !got[v] {
					t.Fatalf("epoch %d key %d: row %d not found", epoch, k, v)
				}
			}
		}
	}
	if compacted == 0 {
		t.Fatal("no batch was compacted: the test does not cover compaction")
	}
	t.Logf("%d compactions, %d batches left", compacted, len(side.batches))
}
