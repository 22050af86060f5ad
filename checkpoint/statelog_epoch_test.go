package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// epochWorld is a query's checkpoint as the micro-batch loop uses it with
// the state log in the epoch log: offset and commit logs, and a memory
// provider whose state records go into the same segments.
type epochWorld struct {
	offs  *OffsetLog
	coms  *CommitLog
	prov  *MemoryProvider
	parts []StatePartition
}

func openEpochWorld(t *testing.T, root string, w *Writer, parts int, opts StoreOptions) *epochWorld {
	t.Helper()
	offs, coms, err := OpenEpochLogs(root, w)
	if err != nil {
		t.Fatal(err)
	}
	offs.SegmentLog().SetSegmentEpochs(4) // rotate and purge often
	mem := poisonmem.New()
	opts.Allocator = mem
	prov := NewMemoryProvider(w, opts)
	stateDir := filepath.Join(root, "state")
	sl, err := OpenQueryStateLog(stateDir, offs.SegmentLog(), w)
	if err != nil {
		t.Fatal(err)
	}
	if sl.ep == nil {
		t.Fatal("a new checkpoint's state log is not in its epoch log")
	}
	if err := prov.UseStateLog(stateDir, sl); err != nil {
		t.Fatal(err)
	}
	ew := &epochWorld{offs: offs, coms: coms, prov: prov}
	for i := 0; i < parts; i++ {
		p, err := prov.OpenPartition(filepath.Join(stateDir, "0", strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		ew.parts = append(ew.parts, p)
	}
	t.Cleanup(func() {
		prov.Close()
		mem.AssertSize(t, 0)
	})
	return ew
}

// rangeChanges is what an epoch reading source positions (start, end]
// does to the state: deterministic in the range, as a re-run must be.
func rangeChanges(start, end int64, parts int) map[int]change {
	out := map[int]change{}
	for x := start + 1; x <= end; x++ {
		p := int(x % int64(parts))
		if out[p] == nil {
			out[p] = change{}
		}
		k := fmt.Sprintf("k%d", x%5)
		if x%7 == 0 {
			out[p][k] = ""
		} else {
			out[p][k] = strconv.FormatInt(x, 10)
		}
	}
	return out
}

// TestEpochStateLogModelWithCrashes runs the micro-batch loop's protocol
// with the state log in the epoch log (stage the offsets record, commit
// the state: one append with the previous epoch's staged commit record,
// publish to an idempotent durable sink, stage the commit record) against
// a source whose end offset differs at every planning, and crashes: at
// every write step of the epoch log (the append fails and is cut back, or
// a torn part of it is left), and between the loop's steps. After each
// crash it recovers as the loop does (re-run the last planned epoch with
// its recorded offsets when it has no commit record) and checks that the
// state at the version the next epoch reads is the model's, and that the
// sink's epochs tile the source exactly once (no epoch published with a
// range other than the one finally committed).
func TestEpochStateLogModelWithCrashes(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { epochModelRun(t, seed) })
	}
}

type span struct{ start, end int64 }

func epochModelRun(t *testing.T, seed int64) {
	const parts, epochs, keep = 4, 60, 6
	r := rand.New(rand.NewSource(seed))
	root := t.TempDir()
	crashAt, steps := 0, 0
	w := &Writer{NoSync: true, Hook: func(step WriteStep, path string) error {
		if !strings.Contains(path, EpochLogDir) {
			return nil
		}
		steps++
		if crashAt > 0 && steps == crashAt {
			return errCrash
		}
		return nil
	}}
	opts := StoreOptions{MinDeltasForSnapshot: 3, MaxDeltasForSnapshot: 6, MinVersionsToRetain: keep}
	ew := openEpochWorld(t, root, w, parts, opts)
	sink := map[int64]span{} // durable, idempotent by epoch id: the first output stays
	crashes, epochsRun := 0, 0

	// recover is the loop's start rule: which epoch runs next, from where,
	// and its recorded end when it is a re-run.
	recover := func() (next, start int64, replay *int64) {
		last, seq, ok, err := ew.offs.Latest()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return 0, 0, nil
		}
		end, _ := strconv.ParseInt(string(seq.Offsets[0]), 10, 64)
		if last > 0 {
			prev, ok, err := ew.offs.Get(last - 1)
			if err != nil || !ok {
				t.Fatalf("offsets of %d: %v %v", last-1, ok, err)
			}
			start, _ = strconv.ParseInt(string(prev.Offsets[0]), 10, 64)
		}
		lc, _, cok, err := ew.coms.Latest()
		if err != nil {
			t.Fatal(err)
		}
		if cok && lc == last {
			return last + 1, end, nil
		}
		return last, start, &end
	}
	crash := func() {
		crashes++
		ew.prov.Close() // in-memory state goes; staged records are lost
		ew.offs.SegmentLog().crashClose()
		crashAt = 0
		ew = openEpochWorld(t, root, w, parts, opts)
	}
	check := func(next int64) {
		model := make([]map[string]string, parts)
		for i := range model {
			model[i] = map[string]string{}
		}
		pos := int64(0)
		for e := int64(0); e < next; e++ {
			s, ok := sink[e]
			if !ok || s.start != pos {
				t.Fatalf("after crash %d: epoch %d is committed but the sink has %v (ok %v), expected to start at %d", crashes, e, s, ok, pos)
			}
			model = applyChanges(model, rangeChanges(s.start, s.end, parts))
			pos = s.end
		}
		q := &groupQuery{t: t, parts: ew.parts}
		got, err := q.read(next)
		if err != nil {
			t.Fatalf("after crash %d: read version %d: %v", crashes, next, err)
		}
		if !equalStates(got, model) {
			t.Fatalf("after crash %d: version %d reads %v, model %v", crashes, next, got, model)
		}
	}

	next, start, replay := recover()
	for next < epochs {
		epochsRun++
		steps, crashAt = 0, 0
		if r.Intn(4) == 0 {
			crashAt = 1 + r.Intn(4)
		}
		end := start + int64(r.Intn(5))
		if replay != nil {
			end = *replay
		} else if ok, err := ew.offs.Stage(next, OffsetSeq{Offsets: []json.RawMessage{json.RawMessage(strconv.FormatInt(end, 10))}}); err != nil || !ok {
			t.Fatalf("stage offsets %d: %v %v", next, ok, err)
		}
		q := &groupQuery{t: t, parts: ew.parts, prov: ew.prov}
		err := q.run(next, rangeChanges(start, end, parts), false)
		if err == nil {
			err = ew.offs.SegmentLog().Flush() // the loop's flush before the sink (a no-op here)
		}
		if err != nil {
			if !errors.Is(err, errCrash) {
				t.Fatalf("epoch %d: %v", next, err)
			}
			leaveEpochDebris(t, r, ew)
			crash()
			next, start, replay = recover()
			check(next)
			continue
		}
		if r.Intn(8) == 0 {
			crash() // after the state write, before the sink
			next, start, replay = recover()
			check(next)
			continue
		}
		if s, ok := sink[next]; ok && s != (span{start, end}) {
			t.Fatalf("epoch %d re-run reads %v, but the sink published %v: exactly-once broken", next, span{start, end}, s)
		} else if !ok {
			sink[next] = span{start, end}
		}
		if ok, err := ew.coms.AddWithNext(next, CommitMetadata{}); err != nil || !ok {
			t.Fatalf("commit %d: %v %v", next, ok, err)
		}
		if r.Intn(4) == 0 {
			steps, crashAt = 0, 0
			if err := ew.coms.Flush(); err != nil { // an idle trigger
				t.Fatal(err)
			}
		}
		if next > keep {
			if err := ew.offs.Purge(next - keep); err != nil {
				t.Fatal(err)
			}
		}
		next, start, replay = next+1, end, nil
		if r.Intn(8) == 0 {
			crash() // after the sink, the commit record staged
			next, start, replay = recover()
			check(next)
		}
	}
	if crashes == 0 {
		t.Fatal("no crash injected")
	}
	if _, err := os.Stat(filepath.Join(root, "state", StateLogDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state/_log exists (%v): the state records belong in the epoch log", err)
	}
	segs, _ := filepath.Glob(filepath.Join(root, EpochLogDir, "*.seg"))
	if len(segs) > 6 {
		t.Errorf("retention kept %d segments: %v", len(segs), segs)
	}
	t.Logf("%d epochs run, %d crashes, %d segments left", epochsRun, crashes, len(segs))
}

// leaveEpochDebris leaves at the end of the newest epoch log segment what
// a crash during an append may leave: nothing, or a torn record.
func leaveEpochDebris(t *testing.T, r *rand.Rand, ew *epochWorld) {
	t.Helper()
	sl := ew.offs.SegmentLog()
	sl.mu.Lock()
	var seg string
	if n := len(sl.segs); n > 0 {
		seg = sl.segs[n-1].path
	}
	sl.mu.Unlock()
	if seg == "" || r.Intn(2) == 0 {
		return
	}
	rec := appendRecord(nil, record{kind: kindState, epoch: 1 << 40, body: []byte("a state record cut short by a crash")})
	rec = rec[:1+r.Intn(len(rec)-1)]
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(rec); err != nil {
		t.Fatal(err)
	}
}

// crashClose drops what a process killed now loses: the staged records and
// the open segment (the kernel closes it, releasing its lock).
func (l *SegmentLog) crashClose() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.staged)
	l.staged = l.staged[:0]
	if l.active != nil {
		l.active.Close()
		l.active = nil
	}
	l.closed = true
}
