package stateful

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestDropUnpartneredHashesKeptRowsOnly: the max bound's side drops its
// unstored rows whose key the other side has nowhere (its new rows, its
// live batches in any partition) and keeps the rest with the keys, key
// nulls and hashes that encoding the kept rows afresh gives. With most
// rows unstored and a small other side, only the kept rows are hashed
// (every row was, before: about half of the keys' cost in Nexmark q7);
// with a large other side each row asks its own partition, as before.
func TestDropUnpartneredHashesKeptRowsOnly(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	codec, err := newValueCodec(mem, pruneTestSchema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		otherLive int // live rows of the other side per partition
		few       bool
	}{{2, true}, {0, true}, {4000, false}} {
		for seed := int64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("otherLive=%d/seed%d", tc.otherLive, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				side := &joinSide{name: "bids", schema: pruneTestSchema, codec: codec, keys: []vector.Expr{vector.Col("v")}}
				other := &joinSide{name: "max", schema: pruneTestSchema, codec: codec, keys: []vector.Expr{vector.Col("v")}}
				s := &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false},
					sides: [2]*joinSide{side, other}, state: statePartitions{scheme: partitionMurmur3}}
				defer s.Close()
				const parts = 3
				// The other side's live keys, each in its partition.
				liveKeys := map[int64]bool{}
				var lv, lt []*int64
				for k := 0; k < tc.otherLive*parts; k++ {
					v, tm := rng.Int63n(100_000), int64(k)
					lv, lt = append(lv, &v), append(lt, &tm)
					liveKeys[v] = true
				}
				byPart := make([][]int, parts)
				if len(lv) > 0 {
					rec := pruneTestRecord(mem, lv, lt)
					lr := &sideRows{rec: rec}
					if err := s.encodeKeys(ctx, other, lr); err != nil {
						t.Fatal(err)
					}
					for j, h := range lr.hashes {
						p := s.state.scheme.partition(h, parts)
						byPart[p] = append(byPart[p], j)
					}
					rec.Release()
				}
				for p := 0; p < parts; p++ {
					lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{newJoinSideLive[uint64](), newJoinSideLive[uint64]()}}
					s.parts = append(s.parts, &joinPart{words: lp})
					if len(byPart[p]) == 0 {
						continue
					}
					var vs, ts []*int64
					for _, j := range byPart[p] {
						vs, ts = append(vs, lv[j]), append(ts, lt[j])
					}
					rec := pruneTestRecord(mem, vs, ts)
					br := &sideRows{rec: rec}
					if err := s.encodeKeys(ctx, other, br); err != nil {
						t.Fatal(err)
					}
					n := int32(len(vs))
					lp.sides[1].addPending(&joinBatch[uint64]{rec: rec, end: n, keys: br.words, keyNull: br.keyNull})
					if p == 0 {
						lp.sides[1].indexPending()
					}
				}
				defer func() {
					for _, jp := range s.parts {
						jp.words.release()
					}
				}()
				// The other side's new rows: two keys, one NULL.
				freshKeys := map[int64]bool{}
				var fv, ft []*int64
				for k := 0; k < 3; k++ {
					v, tm := rng.Int63n(100_000), int64(k)
					if k == 2 {
						fv = append(fv, nil)
					} else {
						fv = append(fv, &v)
						freshKeys[v] = true
					}
					ft = append(ft, &tm)
				}
				frec := pruneTestRecord(mem, fv, ft)
				defer frec.Release()
				fr := &sideRows{rec: frec, excluded: make([]bool, 3)}
				if err := s.encodeKeys(ctx, other, fr); err != nil {
					t.Fatal(err)
				}
				// The bids: most unstored; some share a key with the other
				// side; NULL keys are never unstored (the bound skips them).
				const n = 5000
				vals, times := make([]*int64, n), make([]*int64, n)
				unstored := make([]bool, n)
				var want []int64
				for j := 0; j < n; j++ {
					v, tm := rng.Int63n(100_000), int64(j)
					switch rng.Intn(50) {
					case 0:
						for k := range freshKeys {
							v = k
						}
					case 1:
						if len(lv) > 0 {
							v = *lv[rng.Intn(len(lv))]
						}
					}
					times[j] = &tm
					if rng.Intn(40) != 0 {
						vals[j] = &v
						unstored[j] = rng.Intn(10) != 0
					}
					if !unstored[j] || freshKeys[v] || liveKeys[v] {
						want = append(want, int64(j))
					}
				}
				rec := pruneTestRecord(mem, vals, times)
				r := &sideRows{rec: rec, excluded: make([]bool, n), unstored: unstored}
				defer r.release()
				s.rowsHashed.Store(0)
				if err := s.dropUnpartnered(ctx, 0, r, fr); err != nil {
					t.Fatal(err)
				}
				// The kept rows are the model's (their times are their
				// input row numbers).
				gotRows := timestampsOf(r)
				if !slices.Equal(gotRows, want) {
					t.Fatalf("kept rows %v…, want %v… (%d against %d)", head(gotRows), head(want), len(gotRows), len(want))
				}
				again := &sideRows{rec: r.rec}
				if err := s.encodeKeys(ctx, side, again); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(r.words, again.words) || !slices.Equal(r.keyNull, again.keyNull) || !slices.Equal(r.hashes, again.hashes) {
					t.Fatal("the kept rows' keys, key nulls or hashes differ from encoding them afresh")
				}
				if len(r.unstored) != len(want) || len(r.excluded) != len(want) {
					t.Fatalf("%d unstored and %d excluded flags for %d rows", len(r.unstored), len(r.excluded), len(want))
				}
				hashed := s.rowsHashed.Load() - int64(len(want)) // encodeKeys above
				switch {
				case tc.few && hashed != int64(len(want)):
					t.Fatalf("%d rows hashed, want only the %d kept of %d", hashed, len(want), n)
				case !tc.few && hashed != n:
					t.Fatalf("%d rows hashed, want all %d (a large other side: each row asks its partition)", hashed, n)
				}
			})
		}
	}
}

// timestampsOf reads r's time column (pruneTestSchema) as int64s.
func timestampsOf(r *sideRows) []int64 {
	var out []int64
	for _, v := range r.rec.Column(1).(*array.Timestamp).TimestampValues() {
		out = append(out, int64(v))
	}
	return out
}

func head(xs []int64) []int64 { return xs[:min(len(xs), 8)] }
