package kafka

import (
	"math"
	"math/rand"
	"testing"
	"time"
)

// markModel is a brute-force model of one input partition: the ranges
// claimed in offset order, each by one instance, each written or not.
type markModel struct {
	ranges []modelRange
}

type modelRange struct {
	inst    string
	end     int64
	us      int64
	written bool
	nothing bool // a claim of nothing (a partition's start): not in the history
}

// view renders the model as the fetched claims and marks.
func (m *markModel) view(ip inputPart) markView {
	v := markView{partitions: map[string]int32{ip.topic: 1}, committed: map[inputPart]int64{},
		claims: map[inputPart]claimHistory{ip: {}}, marks: map[string]map[inputPart]inputMark{}}
	for _, r := range m.ranges {
		v.committed[ip] = r.end
		if r.nothing {
			continue
		}
		v.claims[ip][r.inst] = r.end
		if r.written {
			if v.marks[r.inst] == nil {
				v.marks[r.inst] = map[inputPart]inputMark{}
			}
			v.marks[r.inst][ip] = inputMark{end: r.end, maxUs: r.us, hasTime: true}
		}
	}
	return v
}

// safe is the truth: the largest event time of the written ranges
// before the first unwritten one.
func (m *markModel) safe() (int64, bool) {
	us, ok := int64(math.MinInt64), false
	for _, r := range m.ranges {
		if r.nothing {
			continue
		}
		if !r.written {
			break
		}
		us, ok = max(us, r.us), true
	}
	return us, ok
}

// TestHopWatermarkNeverPassesAMissingRange: random claims and writes of
// one input partition by three instances (each writes its claims in
// order, one outstanding at most, and may stop for a while as a killed
// instance does); the partition's event time is never beyond the
// largest event time of the written ranges before the first missing
// one, and equals it whenever nothing is missing.
func TestHopWatermarkNeverPassesAMissingRange(t *testing.T) {
	ip := inputPart{"ev", 0}
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		m := &markModel{ranges: []modelRange{{inst: "a", end: 0, nothing: true}}}
		insts := []string{"a", "b", "c"}
		open := map[string]int{} // instance -> index of its unwritten range
		off, us := int64(0), int64(0)
		for step := 0; step < 60; step++ {
			inst := insts[rng.Intn(len(insts))]
			if i, ok := open[inst]; ok {
				if rng.Intn(3) > 0 {
					m.ranges[i].written = true
					delete(open, inst)
				}
			} else {
				off += 1 + rng.Int63n(50)
				us += rng.Int63n(1000)
				open[inst] = len(m.ranges)
				m.ranges = append(m.ranges, modelRange{inst: inst, end: off, us: us})
			}
			got, known, _ := partitionEventTime(m.view(ip), ip)
			want, wantOK := m.safe()
			if known && (!wantOK || got > want) {
				t.Fatalf("seed %d step %d: event time %d, but only %d (%v) is safe: %+v", seed, step, got, want, wantOK, m.ranges)
			}
			if len(open) == 0 && wantOK && (!known || got != want) {
				t.Fatalf("seed %d step %d: nothing missing, event time %d (%v), want %d", seed, step, got, known, want)
			}
		}
	}
}

// TestHopWatermarkWaitsForEveryInputPartition: the hop's watermark is the
// minimum over the input partitions; a partition nobody reported holds
// it; a range claimed and not written (a killed instance's epoch) holds
// its partition at what was written before it, even while another
// instance reads on; a partition's event time never goes back; an input
// partition that does not move for the idle timeout stops holding it.
func TestHopWatermarkWaitsForEveryInputPartition(t *testing.T) {
	now := time.Unix(1000, 0)
	w := newHopWatermark(10 * time.Second)
	p0, p1 := inputPart{"ev", 0}, inputPart{"ev", 1}
	v := markView{partitions: map[string]int32{"ev": 2}, committed: map[inputPart]int64{p0: 100},
		claims: map[inputPart]claimHistory{p0: {"a": 100}},
		marks:  map[string]map[inputPart]inputMark{"a": {p0: {end: 100, maxUs: 50e6, hasTime: true}}}}
	if _, hold := w.update(v, now); !hold {
		t.Fatal("the watermark moved while input partition 1 has not reported")
	}
	v.committed[p1] = 80
	v.claims[p1] = claimHistory{"b": 80}
	v.marks["b"] = map[inputPart]inputMark{p1: {end: 80, maxUs: 40e6, hasTime: true}}
	if us, hold := w.update(v, now); hold || us != 40e6 {
		t.Fatalf("got %d (hold %v), want 40 s: the slower partition", us, hold)
	}
	// b claims [80, 120) of partition 1 and dies; a takes partition 1
	// over and reads on from 120: partition 1 waits for b's range.
	v.claims[p1] = claimHistory{"b": 120, "a": 200}
	v.committed[p1] = 200
	v.marks["a"][p1] = inputMark{end: 200, maxUs: 90e6, hasTime: true}
	v.committed[p0], v.claims[p0]["a"] = 300, 300
	v.marks["a"][p0] = inputMark{end: 300, maxUs: 90e6, hasTime: true}
	now = now.Add(time.Minute) // b's marks are old: no writer is idle, partitions are
	if us, hold := w.update(v, now); hold || us != 40e6 {
		t.Fatalf("got %d (hold %v), want 40 s: partition 1 waits for b's claimed range", us, hold)
	}
	// b restarts and writes its range: partition 1 reaches a's 90 s.
	v.marks["b"][p1] = inputMark{end: 120, maxUs: 45e6, hasTime: true}
	if us, hold := w.update(v, now); hold || us != 90e6 {
		t.Fatalf("got %d (hold %v), want 90 s", us, hold)
	}
	// a claims on in partition 0 (in flight): partition 0 stays at 90 s,
	// not lower.
	v.claims[p0]["a"], v.committed[p0] = 400, 400
	if us, hold := w.update(v, now); hold || us != 90e6 {
		t.Fatalf("got %d (hold %v), want 90 s while a writes", us, hold)
	}
	// Partition 1 stops moving; partition 0 goes on: after the idle
	// timeout partition 1 no longer holds it.
	v.marks["a"][p0] = inputMark{end: 400, maxUs: 150e6, hasTime: true}
	now = now.Add(5 * time.Second)
	if us, _ := w.update(v, now); us != 90e6 {
		t.Fatalf("got %d, want 90 s before partition 1 is idle", us)
	}
	now = now.Add(6 * time.Second)
	if us, hold := w.update(v, now); hold || us != 150e6 {
		t.Fatalf("got %d (hold %v), want 150 s with partition 1 idle", us, hold)
	}
}

// FuzzHopMark: a mark's metadata is outside input (any client can commit
// to a group): decoding never panics, and what decodes encodes back.
func FuzzHopMark(f *testing.F) {
	f.Add(encodeHopMark(1_700_000_000_000_000))
	f.Add(encodeHopMark(math.MinInt64))
	f.Add(encodeHopMark(-1))
	f.Add("arrowstream.wm.v1;x")
	f.Add("")
	f.Fuzz(func(t *testing.T, meta string) {
		us, ok, err := parseHopMark(meta)
		if err != nil {
			return
		}
		want := int64(math.MinInt64)
		if ok {
			want = us
		}
		if again, ok2, err := parseHopMark(encodeHopMark(want)); err != nil || ok2 != ok || (ok && again != us) {
			t.Fatalf("%q: decoded %d %v, re-encoded decodes to %d %v %v", meta, us, ok, again, ok2, err)
		}
	})
}
