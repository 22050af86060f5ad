package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// randomArena fills a changelog arena with random upserts and deletes:
// empty keys and values, keys changed twice in the epoch, deletes of keys
// never upserted, and sizes on both sides of the thresholds that decide
// how the delta is stored (stateCompressMin; compressSampleMin, with
// compressible and random values). model is what the epoch leaves.
func randomArena(rng *rand.Rand) (a *changeArena, model map[string][]byte, deleted map[string]bool) {
	a = &changeArena{}
	model, deleted = map[string][]byte{}, map[string]bool{}
	var n int
	switch rng.IntN(5) {
	case 0:
		n = 0
	case 1:
		n = 1 + rng.IntN(8)
	case 2:
		n = 50 + rng.IntN(200) // around stateCompressMin
	case 3:
		n = 2000 + rng.IntN(2000)
	default:
		n = 8000 + rng.IntN(4000) // past compressSampleMin
	}
	random := rng.IntN(2) == 0 // values S2 cannot shrink
	keySpace := max(n/2, 1)
	for range n {
		var key []byte
		if rng.IntN(50) > 0 {
			key = fmt.Appendf(nil, "k%d", rng.IntN(keySpace))
		}
		if rng.IntN(4) == 0 {
			a.add(key, nil, false)
			delete(model, string(key))
			deleted[string(key)] = true
			continue
		}
		var val []byte
		if rng.IntN(20) > 0 {
			val = make([]byte, rng.IntN(64))
			if random {
				for i := range val {
					val[i] = byte(rng.Uint32())
				}
			} else {
				copy(val, key)
			}
		}
		a.add(key, val, true)
		model[string(key)] = val
		delete(deleted, string(key))
	}
	return a, model, deleted
}

// TestChangelogDeltaMatchesEncoded checks the delta the group commit
// encodes straight into the state log record (appendDelta) against the
// one encodeChangelog makes on its own (the path before): both decode to
// the epoch's changes, the same bytes when the old one is stored, at any
// offset of the record and of the length deltaLen says; and a record
// built from the arenas equals the record built from their deltas, entry
// lengths included.
func TestChangelogDeltaMatchesEncoded(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 19))
		var want []StateDelta
		var got []StateDelta
		for p := range 1 + rng.IntN(3) {
			a, model, deleted := randomArena(rng)
			old, err := encodeChangelog(a)
			if err != nil {
				t.Fatal(err)
			}
			prefix := make([]byte, rng.IntN(9))
			buf := a.appendDelta(prefix, nil)
			delta := buf[len(prefix):]
			if !bytes.Equal(buf[:len(prefix)], prefix) {
				t.Fatalf("seed %d partition %d: appendDelta changed the bytes before it", seed, p)
			}
			if len(delta) != a.deltaLen() {
				t.Fatalf("seed %d partition %d: deltaLen %d, appendDelta wrote %d bytes", seed, p, a.deltaLen(), len(delta))
			}
			if old[4] == stateCodecStored && !bytes.Equal(delta, old) {
				t.Fatalf("seed %d partition %d (%d entries): appendDelta wrote %d bytes, encodeChangelog stored %d, and they differ", seed, p, a.len(), len(delta), len(old))
			}
			wantData := maps.Clone(model)
			wantData["untouched"] = []byte("u")
			for i, raw := range [][]byte{old, delta} {
				data := map[string][]byte{"untouched": []byte("u")}
				for k := range deleted {
					data[k] = []byte("before")
				}
				if err := decodeState(mem, raw, data); err != nil {
					t.Fatalf("seed %d partition %d: decode (new path: %v): %v", seed, p, i == 1, err)
				}
				if !maps.EqualFunc(data, wantData, bytes.Equal) {
					t.Fatalf("seed %d partition %d: decoded %d keys (new path: %v), want %d", seed, p, len(data), i == 1, len(wantData))
				}
			}
			path := fmt.Sprintf("0/%d", p)
			want = append(want, StateDelta{Path: path, Raw: delta})
			got = append(got, StateDelta{Path: path, enc: a})
		}
		lens := make([]int64, len(got))
		rec := appendStatePayload([]byte("x"), 5, got, lens, nil)
		ref := appendStatePayload([]byte("x"), 5, want, nil, nil)
		if !bytes.Equal(rec, ref) {
			t.Fatalf("seed %d: the record from the arenas (%d bytes) differs from the one from their deltas (%d)", seed, len(rec), len(ref))
		}
		for i, d := range want {
			if lens[i] != int64(len(d.Raw)) {
				t.Fatalf("seed %d: entry %d length %d, its delta is %d bytes", seed, i, lens[i], len(d.Raw))
			}
		}
	}
}

// TestChangelogGroupCommitReadsBack commits random changelog epochs of
// three partitions through the group commit (deltas encoded straight into
// the log's records; the state log in the epoch log, and in state/_log as
// older checkpoints keep it), restarts from the files every few epochs and
// checks every partition against the model, also between restarts (reads
// through the index the appends made).
func TestChangelogGroupCommitReadsBack(t *testing.T) {
	for _, inEpochLog := range []bool{true, false} {
		t.Run(fmt.Sprintf("epochlog=%v", inEpochLog), func(t *testing.T) { changelogGroupCommitReadsBack(t, inEpochLog) })
	}
}

func changelogGroupCommitReadsBack(t *testing.T, inEpochLog bool) {
	ctx := context.Background()
	root := t.TempDir()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 11))
	const parts = 3
	models := make([]map[string][]byte, parts)
	for i := range models {
		models[i] = map[string][]byte{}
	}
	w := &Writer{NoSync: true}
	opts := StoreOptions{Allocator: mem, MinDeltasForSnapshot: 1 << 30, MaxDeltasForSnapshot: 1 << 30, MinVersionsToRetain: 1 << 20}
	stateDir := filepath.Join(root, "state")
	var (
		ep    *SegmentLog
		prov  *MemoryProvider
		ps    [parts]StatePartition
		err   error
		epoch int64
	)
	open := func() {
		if inEpochLog {
			ep, err = OpenSegmentLog(filepath.Join(root, EpochLogDir), w, true)
			if err != nil {
				t.Fatal(err)
			}
		}
		l, err := OpenQueryStateLog(stateDir, ep, w)
		if err != nil {
			t.Fatal(err)
		}
		prov = NewMemoryProvider(w, opts)
		if err := prov.UseStateLog(stateDir, l); err != nil {
			t.Fatal(err)
		}
		for i := range ps {
			if ps[i], err = prov.OpenPartition(filepath.Join(stateDir, "0", fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	closeAll := func() {
		if err := prov.Close(); err != nil {
			t.Fatal(err)
		}
		if ep == nil {
			return
		}
		if err := ep.Close(); err != nil {
			t.Fatal(err)
		}
	}
	open()
	for ; epoch < 40; epoch++ {
		if epoch%7 == 6 || epoch%7 == 3 {
			// Read back from the files: after a restart (the log's
			// index rebuilt from them), and in the process (the index
			// the appends made).
			if epoch%7 == 6 {
				closeAll()
				open()
			}
			for i, p := range ps {
				st, err := p.Begin(epoch)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string][]byte{}
				if err := st.Scan(func(k, v []byte) bool {
					got[string(k)] = bytes.Clone(v)
					return true
				}); err != nil {
					t.Fatal(err)
				}
				st.Abort()
				if !maps.EqualFunc(got, models[i], bytes.Equal) {
					t.Fatalf("epoch %d partition %d: read %d keys back, want %d", epoch, i, len(got), len(models[i]))
				}
			}
		}
		stores := make([]StateStore, parts)
		for i, p := range ps {
			st, err := p.Begin(epoch)
			if err != nil {
				t.Fatal(err)
			}
			stores[i] = st
			_, model, deleted := randomArena(rng)
			cw := st.(ChangelogWriter)
			for k := range deleted {
				cw.LogDelete([]byte(k))
				delete(models[i], k)
			}
			for k, v := range model {
				cw.LogUpsert([]byte(k), v)
				models[i][k] = bytes.Clone(v)
			}
			cw.SetLiveRows(int64(len(models[i])))
		}
		if err := prov.CommitGroup(ctx, stores); err != nil {
			t.Fatal(err)
		}
		if ep == nil {
			continue
		}
		if err := ep.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	closeAll()
}
