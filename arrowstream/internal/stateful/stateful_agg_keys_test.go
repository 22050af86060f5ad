package stateful

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStoredKeysMatchModel runs a watermarked aggregation with enough
// keys that evicted groups are compacted away many times, over random
// epochs with aborts and restarts (some from the files), under both
// partitionings and both output modes, and checks after every committed
// epoch that (1) the output and the number of groups follow the
// brute-force model, (2) every store key and partition kept with a group
// (stateful_agg_keys.go) is the one encoding and hashing its key gives,
// and (3) the kept keys were used: an epoch logged evictions from them.
// The restarts from the files check that the changes and deletions
// logged from kept keys reached the right partitions under the right
// keys: the rebuilt state must be the model's.
func TestStoredKeysMatchModel(t *testing.T) {
	type shape struct {
		name    string
		byKey   bool // GROUP BY k, t (else GROUP BY t: the fixed-width key path)
		timeKey int
		hashed  string // ConfClusterStatePartitionKeys ("-": unset)
	}
	for _, sh := range []shape{{"k,t", true, 1, "-"}, {"t", false, 0, "-"}, {"k,t hashing k", true, 1, "0"}, {"k,t hashing none", true, 1, ""}} {
		for _, scheme := range []string{stream.PartitioningKeyEncoder, stream.PartitioningMurmur3} {
			for _, mode := range []stream.OutputMode{stream.Append, stream.Update} {
				t.Run(fmt.Sprintf("%s/%s/%s", sh.name, scheme, mode), func(t *testing.T) {
					runStoredKeys(t, sh.byKey, sh.timeKey, scheme, mode, sh.hashed)
				})
			}
		}
	}
}

// runStoredKeys is one case of TestStoredKeysMatchModel; GROUP BY k, t
// keeps its keys as words, whose store keys are encoded from them
// (stateful_agg_wordkeys.go): the run checks that it did.
func runStoredKeys(t *testing.T, byKey bool, timeKey int, scheme string, mode stream.OutputMode, hashed string) {
	const parts = 3
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, parts)
	defer func() { stores.close() }()
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
		},
	}
	if !byKey {
		spec.GroupBy = spec.GroupBy[1:]
	}
	newOp := func() *statefulAggregate {
		op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, mode, timeKey)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	op := newOp()
	defer func() { op.Close() }()
	model := &aggModel{mode: mode, state: map[[2]int64][2]int64{}}
	rng := rand.New(rand.NewPCG(7, uint64(len(scheme))))
	conf := map[string]string{stream.ConfStatePartitioning: scheme}
	if hashed != "-" {
		conf[stream.ConfClusterStatePartitionKeys] = hashed
	}
	lateMs, fromKept, compactions, fromWords := int64(0), 0, 0, 0
	for id := int64(0); id < 24; id++ {
		wmMs := max(0, (id-2)*1000)
		var rows [][2]int64
		var data []vt.Row
		for range 600 {
			k := rng.Int64N(900)
			if !byKey {
				k = 0 // one group per time: up to 4000 a second
			}
			ts := (max(0, id-3)*1000 + rng.Int64N(4000)) * 1000
			rows = append(rows, [2]int64{k, ts})
			data = append(data, vt.Row{k, ts})
		}
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts, Conf: conf}}
		run := func() []string {
			rec := vt.BuildRecord(mem, liveInSchema, data)
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
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
				if !byKey {
					r = append(vt.Row{int64(0)}, r...)
				}
				got = append(got, fmt.Sprint(r...))
			}
			releaseRecords(recs)
			slices.Sort(got)
			return got
		}
		if rng.IntN(6) == 0 { // an attempt that fails after running
			run()
			stores.abort()
			op.Abort()
		}
		groupsBefore := 0
		if op.live != nil {
			groupsBefore = op.live.agg.NumGroups()
		}
		kept := 0
		if op.live != nil && op.live.version == id {
			for g := range int32(op.live.agg.NumGroups()) {
				if _, _, ok := op.live.storedKey(g); ok {
					kept++
				}
			}
		}
		got := run()
		op.Committed(stores.commit(ctx))
		want := model.epoch(rows, wmMs, lateMs)
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: got %d rows, want %d:\n%v\nwant\n%v", id, len(got), len(want), got, want)
		}
		if p := op.Report(); p.NumRowsTotal != int64(len(model.state)) {
			t.Fatalf("epoch %d: numRowsTotal %d, want %d", id, p.NumRowsTotal, len(model.state))
		}
		if kept > 0 && op.Report().NumRowsRemoved > 0 {
			fromKept++
		}
		if op.live.agg.NumGroups() < groupsBefore {
			compactions++
		}
		checkStoredKeys(t, op, parts, id)
		// The changed and evicted groups go from views into the log
		// (changelogState.upsertsOf, removesOf), not through the scratch.
		if b := &op.live.logged.batch; cap(b.keys)+cap(b.vals) != 0 {
			t.Fatalf("epoch %d: the logged groups were gathered into the scratch first (%d bytes of it)", id, cap(b.keys)+cap(b.vals))
		}
		if op.live.logged.words.Len() > 0 {
			fromWords++
		}
		if rng.IntN(6) == 0 {
			op.Close()
			op = newOp()
			if rng.IntN(2) == 0 {
				stores.close()
				stores = newTestStores(t, mem, dir, parts)
			}
		}
		lateMs = wmMs
	}
	if fromKept == 0 || compactions == 0 {
		t.Fatalf("%d epochs evicted with kept keys, %d compactions: the test did not reach the paths it checks", fromKept, compactions)
	}
	if byKey != (fromWords > 0) {
		t.Fatalf("GROUP BY k, t %v: keys encoded from words after %d epochs", byKey, fromWords)
	}
}

// checkStoredKeys checks that every group's kept store key and partition
// are those its key encodes and hashes to.
func checkStoredKeys(t *testing.T, op *statefulAggregate, parts int, id int64) {
	t.Helper()
	l := op.live
	var gids []int32
	for g := range int32(l.agg.NumGroups()) {
		if _, _, ok := l.storedKey(g); ok {
			gids = append(gids, g)
		}
	}
	if len(gids) == 0 {
		return
	}
	rec, err := l.agg.State(gids)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if err := op.keyCodec.encode(rec); err != nil {
		t.Fatal(err)
	}
	for i, g := range gids {
		key, p, _ := l.storedKey(g)
		if want := op.keyCodec.at(i); !bytes.Equal(key, want) {
			t.Fatalf("epoch %d: group %d keeps key %x, its key encodes to %x", id, g, key, want)
		}
		if want := op.state.scheme.of(op.keyCodec, i, parts); p != want {
			t.Fatalf("epoch %d: group %d keeps partition %d, its key hashes to %d", id, g, p, want)
		}
	}
}
