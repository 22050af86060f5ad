package vector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestShouldCompactForKeepsTable folds a sliding window's panes as q5
// does: each epoch a few hundred new (window, key) groups and more rows
// into live ones, the groups older than a few epochs deleted, compacting
// whenever ShouldCompactFor says so for the epoch's new ids. Dead groups
// never reach half of the ids here, so ShouldCompact alone let them fill
// the words table until it doubled; with ShouldCompactFor the table stays
// at the size the live groups and one epoch's new ones need. Every live
// group's count must match a map model at every epoch.
func TestShouldCompactForKeepsTable(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testShouldCompactFor(t, seed) })
	}
}

// wk is a (window, key) group of the model.
type wk struct{ w, k int64 }

func testShouldCompactFor(t *testing.T, seed uint64) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	partial := arrow.NewSchema([]arrow.Field{
		{Name: "w", Type: Int64, Nullable: true},
		{Name: "k", Type: Int64, Nullable: true},
		{Name: "n.count", Type: Int64},
	}, nil)
	l, err := NewLiveAggregate(mem, partial, 2, []AggregateCall{{Func: AggCountStar, Name: "n"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rng := rand.New(rand.NewPCG(seed, 19))
	perEpoch := 400 + rng.IntN(400) // new groups an epoch
	keep := 6 + rng.IntN(8)         // epochs a group stays
	model := map[wk]int64{}
	compactions := 0
	for e := range 60 {
		b := array.NewRecordBuilder(mem, partial)
		add := func(w, k, n int64) {
			b.Field(0).(*array.Int64Builder).Append(w)
			b.Field(1).(*array.Int64Builder).Append(k)
			b.Field(2).(*array.Int64Builder).Append(n)
			model[wk{w, k}] += n
		}
		for k := range perEpoch {
			add(int64(e), int64(k), 1+rng.Int64N(3))
		}
		for range perEpoch {
			if w := int64(e - rng.IntN(keep)); w >= 0 {
				add(w, rng.Int64N(int64(perEpoch)), 1)
			}
		}
		rec := b.NewRecord()
		b.Release()
		if _, err := l.Merge(ctx, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		// Delete the groups of the window that left.
		g := l.b.grouper.(*wordsGrouper)
		var del []int32
		for gid := range g.numGroups() {
			if !l.IsDead(int32(gid)) && int64(g.word(gid, 0)) <= int64(e-keep) {
				del = append(del, int32(gid))
			}
		}
		l.Delete(del)
		for key := range model {
			if key.w <= int64(e-keep) {
				delete(model, key)
			}
		}
		if l.ShouldCompactFor(perEpoch) {
			if _, err := l.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			compactions++
		}
		// The live groups and one epoch's new ones at most half fill
		// the table; it must not be larger than that needs.
		need := 64
		for need < 2*(keep*perEpoch+perEpoch+1) {
			need *= 2
		}
		if s := g.numSlots(); s > need {
			t.Fatalf("epoch %d: %d slots for %d live groups (%d ids), want at most %d", e, s, l.NumLive(), l.NumGroups(), need)
		}
		checkLiveCounts(t, l, model)
	}
	if compactions == 0 {
		t.Fatal("no compaction: the test does not test it")
	}
}

// checkLiveCounts compares the live groups' (w, k, n) with model.
func checkLiveCounts(t *testing.T, l *LiveAggregate, model map[wk]int64) {
	t.Helper()
	var live []int32
	for gid := range l.NumGroups() {
		if !l.IsDead(int32(gid)) {
			live = append(live, int32(gid))
		}
	}
	st, err := l.State(live)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release()
	ws := st.Column(0).(*array.Int64).Int64Values()
	ks := st.Column(1).(*array.Int64).Int64Values()
	ns := st.Column(2).(*array.Int64).Int64Values()
	if len(ws) != len(model) {
		t.Fatalf("%d live groups, model has %d", len(ws), len(model))
	}
	for i := range ws {
		if want := model[wk{ws[i], ks[i]}]; ns[i] != want {
			t.Fatalf("group (%d, %d): count %d, want %d", ws[i], ks[i], ns[i], want)
		}
	}
}
