package stateful

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// viewRow is a row of either side in the model: key, event time (µs),
// the epoch it came in.
type viewRow struct{ k, t, ep int64 }

// TestJoinViewsProperty: a stream-stream join whose stored batches are
// views of its epochs' input, over many epochs of random rows with
// restarts (after which the state is read back from the store as records
// of its own) and, for the time-bounded condition, eviction. At every
// epoch:
//   - the output is the brute-force model's: every pair of rows with
//     equal keys (and times within the bound) whose later row came in
//     this epoch (the data is never late, so eviction loses no match);
//   - the state's held bytes (heldArrow) are within 1.1× of what the
//     allocators hold for it: the operator's pool and the input's
//     allocator, whose records the views keep;
//   - the count of held input records is the model's: each distinct
//     record the live batches view, counted once, whole, with its views'
//     live rows and holders;
//   - some batch is a view (the split copies nothing);
//
// and at the end every allocator is back at zero.
func TestJoinViewsProperty(t *testing.T) {
	const timed = "k = k2 AND t2 >= t - INTERVAL 2 SECONDS AND t2 <= t + INTERVAL 2 SECONDS"
	for _, c := range []struct {
		name, on  string
		bound     int64 // µs; 0: none
		watermark bool
		keys      int64
	}{
		{"timed-evict", timed, 2_000_000, true, 300},
		{"equi-merged", "k = k2", 0, false, 6000},
	} {
		for _, parts := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/%d", c.name, parts), func(t *testing.T) {
				testJoinViews(t, c.on, c.bound, c.watermark, c.keys, parts)
			})
		}
	}
}

func testJoinViews(t *testing.T, on string, bound int64, watermark bool, keys int64, parts int) {
	const factor = 1.1
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	pool := vector.NewPoolAllocator(checked, 0)
	defer pool.Close()
	input := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer input.AssertSize(t, 0)
	other := memory.NewGoAllocator() // the stores: not counted
	ctx := context.Background()
	dir := t.TempDir()
	opts := checkpoint.StoreOptions{Allocator: other, MinDeltasForSnapshot: 1, MaxDeltasForSnapshot: 2, MinVersionsToRetain: 2}
	stores := newOptStores(t, dir, parts, opts)
	newOp := func() *joinSnapOp {
		op := newJoinSnapOp(t, pool, on, "inner", watermark)
		op.mem = input
		return op
	}
	op := newOp()
	defer func() {
		if err := op.Close(); err != nil {
			t.Error(err)
		}
		stores.close()
	}()
	rng := rand.New(rand.NewSource(int64(11 + parts)))
	var sides [2][]viewRow
	restarts, viewed, sparse := 0, 0, 0
	for id := int64(0); id < 36; id++ {
		// Times in [id+1, id+5] seconds; the watermark (id−2) s leaves
		// every row on time and evicts rows no later row can match.
		var data []vt.Row
		var fresh [2][]viewRow
		for j := range 400 + rng.Intn(2400) {
			r := viewRow{k: rng.Int63n(keys), t: (id+1)*1_000_000 + rng.Int63n(4_000_001), ep: id}
			data = append(data, vt.Row{r.k, r.t})
			fresh[j%2] = append(fresh[j%2], r) // the driver's split: even rows left
		}
		want := viewModelPairs(sides, fresh, bound)
		sides[0], sides[1] = append(sides[0], fresh[0]...), append(sides[1], fresh[1]...)
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: max(0, id-2) * 1000, HasWatermark: watermark, CheckpointDir: dir, NumPartitions: parts}}
		rec := vt.BuildRecord(input, liveInSchema, data)
		scan, err := vector.NewScan(liveInSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep.State = stores.begin(id)
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			t.Fatalf("epoch %d: %v", id, err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		got := viewOutPairs(t, recs)
		releaseRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		op.Committed(stores.commit(ctx))
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: %d pairs, the model %d", id, len(got), len(want))
		}
		for _, part := range stores.parts {
			if err := part.(*checkpoint.StorePartition).WaitMaintenance(); err != nil {
				t.Fatal(err)
			}
		}
		v, sp := checkViewLedger(t, id, op.j)
		viewed += v
		sparse += sp
		held := int64(checked.CurrentAlloc()) - int64(pool.Retained()+pool.RetainedLarge()) + int64(input.CurrentAlloc())
		reported := op.j.heldArrow()
		if reported == 0 || held == 0 {
			t.Fatalf("epoch %d: the join reports %d bytes held, the allocators hold %d", id, reported, held)
		}
		if r := float64(held) / float64(reported); r > factor || r < 1/factor {
			t.Fatalf("epoch %d: the allocators hold %d bytes for the join's state, the join reports %d (%.2f×, allowed %.2f×)", id, held, reported, r, factor)
		}
		if rng.Intn(5) == 0 {
			restarts++
			stores.close()
			stores = newOptStores(t, dir, parts, opts)
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
			op = newOp()
		}
	}
	if viewed == 0 {
		t.Fatal("no stored batch was a view of its input")
	}
	if restarts == 0 {
		t.Fatal("no restart: the test does not cover reading views back")
	}
	t.Logf("%d restarts; views seen %d, of a mostly dead input %d (batch-epochs)", restarts, viewed, sparse)
}

// viewModelPairs is the brute-force answer of an epoch: the new rows of
// each side against the other side's rows so far and its new ones, as
// sorted "lk lt rk rt" strings.
func viewModelPairs(old, fresh [2][]viewRow, bound int64) []string {
	var out []string
	match := func(l, r viewRow) {
		if l.k == r.k && (bound == 0 || r.t >= l.t-bound && r.t <= l.t+bound) {
			out = append(out, fmt.Sprint(l.k, l.t, r.k, r.t))
		}
	}
	byKey := func(rows []viewRow) map[int64][]viewRow {
		m := map[int64][]viewRow{}
		for _, r := range rows {
			m[r.k] = append(m[r.k], r)
		}
		return m
	}
	oldR, oldL, newR := byKey(old[1]), byKey(old[0]), byKey(fresh[1])
	for _, l := range fresh[0] {
		for _, r := range oldR[l.k] {
			match(l, r)
		}
		for _, r := range newR[l.k] {
			match(l, r)
		}
	}
	for _, r := range fresh[1] {
		for _, l := range oldL[r.k] {
			match(l, r)
		}
	}
	slices.Sort(out)
	return out
}

// viewOutPairs renders the join's output (k, t, k2, t2) as the model does.
func viewOutPairs(t *testing.T, recs []arrow.Record) []string {
	t.Helper()
	val := func(a arrow.Array, i int) int64 {
		switch a := a.(type) {
		case *array.Int64:
			return a.Value(i)
		case *array.Timestamp:
			return int64(a.Value(i))
		}
		t.Fatalf("output column of type %s", a.DataType())
		return 0
	}
	var out []string
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprint(val(rec.Column(0), i), val(rec.Column(1), i), val(rec.Column(2), i), val(rec.Column(3), i)))
		}
	}
	slices.Sort(out)
	return out
}

// checkViewLedger checks the join's count of held input records against
// a model built from its live batches, and reports how many batches are
// views and how many view a mostly dead input (views of it in other
// partitions are copied out when those evict).
func checkViewLedger(t *testing.T, id int64, j *statefulJoin) (views, sparse int) {
	t.Helper()
	type use struct {
		live    int64
		holders int32
	}
	uses := map[*joinInput]*use{}
	note := func(b *joinBatch[uint64]) {
		if b.in == nil || b.rec == nil {
			return
		}
		views++
		u := uses[b.in]
		if u == nil {
			u = &use{}
			uses[b.in] = u
		}
		u.live += int64(b.end - b.cursor)
		u.holders++
		if b.rec != b.in.rec {
			t.Fatalf("epoch %d: batch %d views a record other than its input's", id, b.id)
		}
	}
	for _, jp := range j.parts {
		if jp.words == nil {
			t.Fatalf("epoch %d: the test's int64 key is not a fixed key", id)
		}
		for _, side := range jp.words.sides {
			for _, b := range side.batches {
				note(b)
			}
		}
	}
	var held int64
	for in, u := range uses {
		held += heldRecordBytes(in.rec)
		if in.live.Load() != u.live || in.holders.Load() != u.holders {
			t.Fatalf("epoch %d: an input counts %d live rows in %d views, its views hold %d in %d", id, in.live.Load(), in.holders.Load(), u.live, u.holders)
		}
		if in.sparse() {
			sparse++
		}
	}
	if got := j.viewHeld.Load(); got != held {
		t.Fatalf("epoch %d: the join counts %d bytes of viewed input records, its views hold %d", id, got, held)
	}
	return views, sparse
}

// TestJoinViewHeldCountsRecordOnce: two partitions' batches view one
// input record. The join counts the record whole and once while any view
// holds it (a count of the views' shares, the way a sliced batch was
// counted, reports half of it once one partition's batch is evicted and
// dropped, though the other still holds the whole record); a view whose
// input is mostly dead is copied out under the same row numbers (the rows
// the key index finds are the same), and the input is then freed and its
// bytes no longer counted.
func TestJoinViewHeldCountsRecordOnce(t *testing.T) {
	input := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer input.AssertSize(t, 0)
	keep := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer keep.AssertSize(t, 0)
	const n = 4000
	r := splitTestRows(input, rand.New(rand.NewSource(56)), n, 1000)
	clear(r.excluded)
	s := &statefulJoin{mem: input, keep: keep}
	split, err := s.splitSide(0, r, 2)
	if err != nil {
		t.Fatal(err)
	}
	rec := r.rec
	recBytes := heldRecordBytes(rec)
	r.release()
	s.parts = []*joinPart{{}, {}}
	var bs [2]*joinBatch[uint64]
	for p, part := range split {
		if part == nil || part.sel == nil {
			t.Fatalf("partition %d: no view of a share of the rows", p)
		}
		m := part.count()
		times := make([]int64, m)
		for k := range times {
			times[k] = int64(k)
		}
		b := &joinBatch[uint64]{id: uint64(p), rec: part.rec, sel: part.sel, in: part.in, end: int32(m), keys: part.words, keyNull: part.keyNull, times: times}
		part.rec.Retain()
		part.in.hold(int64(m))
		side := newJoinSideLive[uint64]()
		side.add(b)
		s.parts[p].words = &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{side, newJoinSideLive[uint64]()}}
		bs[p] = b
		part.release()
	}
	defer func() {
		for _, jp := range s.parts {
			jp.release()
		}
	}()
	// What the index finds of a key: the rows' values, read through the
	// batch's selection.
	values := func(p int) map[string]int {
		side := s.parts[p].words.sides[0]
		out := map[string]int{}
		for k := uint64(0); k < 1000; k++ {
			kr := side.index.get(k)
			if kr == nil {
				continue
			}
			for _, ref := range kr.refs {
				if !ref.alive() {
					continue
				}
				row := selRow(ref.b.sel, int(ref.row-ref.b.base))
				out[fmt.Sprint(k, ref.b.rec.Column(1).ValueStr(row), ref.b.rec.Column(2).ValueStr(row))]++
			}
		}
		return out
	}
	check := func(when string, want int64) {
		t.Helper()
		if got := s.heldArrow(); got != want {
			t.Fatalf("%s: the join counts %d Arrow bytes held, want %d", when, got, want)
		}
	}
	// The buffers' capacity: what the allocator holds, and a little more
	// where a builder shrank a buffer in place.
	if alloc := int64(input.CurrentAlloc()); recBytes < alloc || float64(recBytes) > 1.02*float64(alloc) {
		t.Fatalf("the input allocator holds %d bytes, the record counts %d", alloc, recBytes)
	}
	check("both partitions viewing", recBytes)
	// Partition 0's batch evicted whole and dropped: the record is held by
	// partition 1's view all the same.
	side0 := s.parts[0].words.sides[0]
	side0.evict(bs[0], int64(n))
	side0.drop(bs[0])
	if got, want := bs[1].in.live.Load(), int64(bs[1].end); got != want {
		t.Fatalf("the input counts %d live rows, its one view holds %d", got, want)
	}
	check("one partition viewing", recBytes)
	// Partition 1 evicts part of its rows: the input is mostly dead, the
	// view copied out (rows [base, end), the same numbers).
	side1 := s.parts[1].words.sides[0]
	side1.evict(bs[1], int64(max(0, int(bs[1].end)-n/2)+10))
	before := values(1)
	if !bs[1].in.sparse() {
		t.Fatalf("%d of %d rows live: not mostly dead", bs[1].in.live.Load(), n)
	}
	if err := side1.copyOut(keep, bs[1]); err != nil {
		t.Fatal(err)
	}
	if bs[1].in != nil || bs[1].sel != nil {
		t.Fatal("still a view after its copy")
	}
	if after := values(1); !maps.Equal(before, after) {
		t.Fatalf("the index finds other rows after the copy: %d keys before, %d after", len(before), len(after))
	}
	if input.CurrentAlloc() != 0 || s.viewHeld.Load() != 0 {
		t.Fatalf("the input is still held after its last view was copied: %d bytes allocated, %d counted", input.CurrentAlloc(), s.viewHeld.Load())
	}
	check("copied out", bs[1].arrow)
	if got, alloc := bs[1].arrow, int64(keep.CurrentAlloc()); got > alloc || float64(alloc) > 1.1*float64(got) {
		t.Fatalf("the copy counts %d bytes, its allocator holds %d", got, alloc)
	}
}
