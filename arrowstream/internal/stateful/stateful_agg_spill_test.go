package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/checkpoint/pebblestore"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// anyStores opens, commits and aborts an operator's partitions of any
// provider, as the engine does.
type anyStores struct {
	t     *testing.T
	prov  checkpoint.StateStoreProvider
	parts []checkpoint.StatePartition
	open  []checkpoint.StateStore
}

func openAnyStores(t *testing.T, mem memory.Allocator, pebble bool, dir string, n int) *anyStores {
	t.Helper()
	s := &anyStores{t: t}
	if pebble {
		p, err := pebblestore.NewProvider(pebblestore.Options{Writer: &checkpoint.Writer{NoSync: true}, BlockCacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		s.prov = p
	} else {
		s.prov = checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{Allocator: mem})
	}
	for p := 0; p < n; p++ {
		part, err := s.prov.OpenPartition(filepath.Join(dir, "state", "0", strconv.Itoa(p)))
		if err != nil {
			t.Fatal(err)
		}
		s.parts = append(s.parts, part)
	}
	return s
}

func (s *anyStores) begin(version int64) []checkpoint.StateStore {
	s.t.Helper()
	s.open = nil
	for _, part := range s.parts {
		st, err := part.Begin(version)
		if err != nil {
			s.t.Fatal(err)
		}
		s.open = append(s.open, st)
	}
	return s.open
}

func (s *anyStores) commit(ctx context.Context) StateCommit {
	s.t.Helper()
	var c StateCommit
	for _, st := range s.open {
		c.NumRowsTotal += int64(st.Len())
		if _, err := st.Commit(ctx); err != nil {
			s.t.Fatal(err)
		}
	}
	c.Partitions = int64(len(s.open))
	s.open = nil
	return c
}

func (s *anyStores) abort() {
	for _, st := range s.open {
		st.Abort()
	}
	s.open = nil
}

func (s *anyStores) close() {
	for _, part := range s.parts {
		if err := part.Close(); err != nil {
			s.t.Error(err)
		}
	}
	if err := s.prov.Close(); err != nil {
		s.t.Error(err)
	}
}

// spillRun is one side of the comparison: an operator over its stores.
type spillRun struct {
	t      *testing.T
	mem    memory.Allocator
	pebble bool
	conf   map[string]string
	dir    string
	parts  int
	newOp  func() *statefulAggregate
	op     *statefulAggregate
	stores *anyStores
}

func (r *spillRun) execute(ctx context.Context, info stream.EpochInfo, data []vt.Row) []string {
	r.t.Helper()
	rec := vt.BuildRecord(r.mem, liveInSchema, data)
	scan, err := vector.NewScan(liveInSchema, rec)
	rec.Release()
	if err != nil {
		r.t.Fatal(err)
	}
	info.CheckpointDir, info.NumPartitions, info.Conf = r.dir, r.parts, r.conf
	ep := Epoch{EpochInfo: info, State: r.stores.begin(info.ID)}
	out, err := r.op.Execute(ctx, ep, scan)
	if err != nil {
		r.t.Fatalf("pebble=%v epoch %d: %v", r.pebble, info.ID, err)
	}
	recs, err := vector.Drain(ctx, out)
	out.Close()
	if err != nil {
		r.t.Fatal(err)
	}
	var got []string
	for _, row := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
		got = append(got, fmt.Sprint(row...))
	}
	releaseRecords(recs)
	slices.Sort(got)
	return got
}

// TestSpilledAggregateMatchesLive is the property test of the bounded
// working set: over random epochs (late rows, evictions, aborted and
// replayed epochs, operator and process restarts), an aggregation whose
// state lives in Pebble with a small live budget gives, every epoch, the
// rows and state row counts of the all-live aggregation over the memory
// provider. Budgets 0 (nothing kept between epochs) and a few KiB
// (the cache dropped now and then) are run, over Pebble and, to show the
// path does not depend on the store, over memory stores.
func TestSpilledAggregateMatchesLive(t *testing.T) {
	modes := []stream.OutputMode{stream.Append, stream.Update, stream.Complete}
	for _, mode := range modes {
		for _, budget := range []string{"0", "4096"} {
			for _, onPebble := range []bool{true, false} {
				for seed := uint64(1); seed <= 3; seed++ {
					name := fmt.Sprintf("%s/budget=%s/pebble=%v/seed=%d", mode, budget, onPebble, seed)
					t.Run(name, func(t *testing.T) {
						if testing.Short() && seed > 1 {
							t.Skip("one seed in -short")
						}
						spillAgainstLive(t, mode, budget, onPebble, seed)
					})
				}
			}
		}
	}
}

func spillAgainstLive(t *testing.T, mode stream.OutputMode, budget string, onPebble bool, seed uint64) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
			{Func: vector.AggMin, Args: []vector.Expr{vector.Col("k")}, Name: "lo"},
			{Func: vector.AggMax, Args: []vector.Expr{vector.Col("k")}, Name: "hi"},
			{Func: vector.AggAvg, Args: []vector.Expr{vector.Col("k")}, Name: "a"},
		},
	}
	timeKey := 1
	newOp := func() *statefulAggregate {
		op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, mode, timeKey)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	rng := rand.New(rand.NewPCG(seed, 19))
	parts := 1 + rng.IntN(3)
	mk := func(pebble bool, conf map[string]string) *spillRun {
		dir := t.TempDir()
		r := &spillRun{t: t, mem: mem, pebble: pebble, conf: conf, dir: dir, parts: parts, newOp: newOp, op: newOp()}
		r.stores = openAnyStores(t, mem, pebble, dir, parts)
		return r
	}
	live := mk(false, map[string]string{})
	spilled := mk(onPebble, map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: budget})
	defer func() {
		for _, r := range []*spillRun{live, spilled} {
			r.op.Close()
			r.stores.close()
		}
	}()
	lateMs := int64(0)
	for id := int64(0); id < 40; id++ {
		wmMs := max(0, (id-4)*1000)
		var data []vt.Row
		for i := 0; i < 1+rng.IntN(60); i++ {
			var tm any = (max(0, id-6) + rng.Int64N(7)) * 1_000_000
			if rng.IntN(25) == 0 {
				tm = nil // a group that is never evicted
			}
			data = append(data, vt.Row{rng.Int64N(40) - 5, tm})
		}
		info := stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true}
		for rng.IntN(4) == 0 { // an attempt that fails after running
			spilled.execute(ctx, info, data)
			spilled.stores.abort()
			spilled.op.Abort()
		}
		want := live.execute(ctx, info, data)
		cw := live.stores.commit(ctx)
		live.op.Committed(cw)
		got := spilled.execute(ctx, info, data)
		cg := spilled.stores.commit(ctx)
		spilled.op.Committed(cg)
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: bounded working set gives\n%v\nall-live gives\n%v", id, got, want)
		}
		if cg.NumRowsTotal != cw.NumRowsTotal {
			t.Fatalf("epoch %d: %d state rows, all-live has %d", id, cg.NumRowsTotal, cw.NumRowsTotal)
		}
		if spilled.op.spill == nil {
			t.Fatalf("epoch %d: the Pebble setting did not bound the working set", id)
		}
		if budget == "0" && spilled.op.live.agg.NumLive() != 0 {
			t.Fatalf("epoch %d: budget 0 keeps %d groups live", id, spilled.op.live.agg.NumLive())
		}
		if rng.IntN(5) == 0 {
			spilled.op.Close()
			spilled.op = newOp() // restart: the time index comes back from the stores' keys
			if rng.IntN(2) == 0 {
				spilled.stores.close()
				spilled.stores = openAnyStores(t, mem, onPebble, spilled.dir, parts)
			}
		}
		lateMs = wmMs
	}
}

// TestLiveStateBudgetSetting checks the setting's parsing and its
// refusals.
func TestLiveStateBudgetSetting(t *testing.T) {
	for _, tc := range []struct {
		conf    map[string]string
		budget  int64
		bounded bool
		err     bool
	}{
		{conf: map[string]string{}},
		{conf: map[string]string{stream.ConfStateStoreProvider: "memory", stream.ConfPebbleLiveStateBytes: "5"}},
		{conf: map[string]string{stream.ConfStateStoreProvider: "Pebble"}, budget: stream.DefaultPebbleLiveStateBytes, bounded: true},
		{conf: map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: " 1024 "}, budget: 1024, bounded: true},
		{conf: map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: "0"}, budget: 0, bounded: true},
		{conf: map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: "-1"}, err: true},
		{conf: map[string]string{stream.ConfStateStoreProvider: "pebble", stream.ConfPebbleLiveStateBytes: "64MiB"}, err: true},
	} {
		budget, bounded, err := liveStateBudget(tc.conf)
		if (err != nil) != tc.err || budget != tc.budget || bounded != tc.bounded {
			t.Errorf("%v: got %d %v %v, want %d %v error=%v", tc.conf, budget, bounded, err, tc.budget, tc.bounded, tc.err)
		}
	}
}
