package chaos

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Modeler is a Workload whose expected outputs can be computed by brute
// force from its input: the harness compares the reference run with them,
// so that a wrong answer that is the same in every run is caught too.
type Modeler interface {
	Model() Result
}

// statefulEpoch is the epoch of a value.
func (w *statefulWorkload) epoch(v int64) int64 { return v / w.perBatch }

// eventMs is the event time of value v in a stream whose late rows are
// those with v % mod == rem (from epoch 10 on); late reports them.
func (w *statefulWorkload) eventMs(v, mod, rem int64) (ms int64, late bool) {
	ms = statefulStartMs + 1000*w.epoch(v)
	if w.epoch(v) >= 10 && v%mod == rem {
		return ms - 60_000, true
	}
	return ms, false
}

// Model computes every output of the stateful workload from its input.
// It assumes only what the queries say (Spark's semantics): rows 60 s
// behind their epoch are late and dropped, on-time rows never are, a
// join matches inside its time range, and state that the watermark
// evicts is emitted (outer rows, sessions) or forgotten (dedup_within).
// The input is shaped so that no answer depends on the exact watermark
// of a batch: each gap is either well inside or well outside a bound.
func (w *statefulWorkload) Model() Result {
	res := Result{}
	for _, q := range w.queries() {
		res[q] = Output{}
	}
	w.modelJoins(res)
	w.modelAggs(res)
	w.modelDedups(res)
	w.modelGroupState(res)
	// Result shows the string ids as the engine formats strings.
	for name, o := range res {
		quoted := Output{}
		for k, e := range o {
			quoted[vector.FormatValue(k, arrow.BinaryTypes.String)] = e
		}
		res[name] = quoted
	}
	return res
}

func (w *statefulWorkload) modelJoins(res Result) {
	n := w.records
	leftMatched := make([]bool, n)
	windows := map[int64]int64{}
	for v := int64(0); v < n; v++ {
		rts, rlate := w.eventMs(v, 11, 5)
		if rlate {
			continue
		}
		matched := false
		if k := w.rightKey(v); k >= 0 && k < n {
			lts, llate := w.eventMs(k, 7, 3)
			if !llate && rts >= lts && rts <= lts+3000 {
				matched = true
				leftMatched[k] = true
				id := fmt.Sprintf("%d-%d", k, v)
				for _, q := range []string{"join_inner", "join_left", "join_right", "join_full"} {
					res[q].Add(id, 1, "")
				}
				windows[lts-lts%5000]++
			}
		}
		if !matched {
			id := fmt.Sprintf("null-%d", v)
			res["join_right"].Add(id, 1, "")
			res["join_full"].Add(id, 1, "")
		}
	}
	for k := int64(0); k < n; k++ {
		if _, late := w.eventMs(k, 7, 3); late {
			continue
		}
		if leftMatched[k] {
			res["join_semi"].Add(strconv.FormatInt(k, 10), 1, "")
			continue
		}
		id := fmt.Sprintf("%d-null", k)
		res["join_left"].Add(id, 1, "")
		res["join_full"].Add(id, 1, "")
	}
	for start, c := range windows {
		res["join_agg"].Add(strconv.FormatInt(start, 10), c, "")
	}
}

func (w *statefulWorkload) modelAggs(res Result) {
	for v := int64(0); v < w.records; v++ {
		ts, late := w.eventMs(v, 13, 7)
		if late {
			continue
		}
		// window_time of the 5-second window is its end minus 1 µs: still
		// inside the 20-second window that holds the 5-second one.
		start5 := ts - ts%5000
		wt := start5 + 4999
		res["agg_agg"].Add(strconv.FormatInt(wt-wt%20000, 10), 1, "")
	}
}

func (w *statefulWorkload) modelDedups(res Result) {
	mod := w.dedupMod()
	for d := int64(0); d < min(mod, w.records); d++ {
		res["dedup"].Add(strconv.FormatInt(d, 10), 1, "")
	}
	seen := map[string]bool{}
	lastEmitted := map[int64]int64{} // dedup_within: d → epoch of its last emitted row
	for v := int64(0); v < w.records; v++ {
		ts, late := w.eventMs(v, 13, 7)
		if late {
			continue
		}
		jittered := ts - 1000*(v%3)
		id := fmt.Sprintf("%d@%d", v%w.dedupWMMod(), jittered)
		if !seen[id] {
			seen[id] = true
			res["dedup_wm"].Add(id, 1, "")
		}
		// dedup_within: a d repeats one epoch later (inside the 5-second
		// delay: suppressed) or 39 or more later (expired: emitted).
		e := w.epoch(v)
		d := v%w.perBatch + w.perBatch*((e/2)%20)
		if prev, ok := lastEmitted[d]; ok && e-prev <= 2 {
			continue
		}
		lastEmitted[d] = e
		res["dedup_within"].Add(fmt.Sprintf("%d@%d", d, ts), 1, "")
	}
}

func (w *statefulWorkload) modelGroupState(res Result) {
	type session struct{ first, last, n int64 }
	byKey := map[int64][]int64{}
	k := w.gsKeys()
	for v := int64(0); v < w.records; v++ {
		res["gs_proc"].Add(strconv.FormatInt(v%37+37*((v/(3*w.perBatch))%4), 10), 1, nullInt)
		ts, late := w.eventMs(v, 13, 7)
		if late {
			continue
		}
		sk := v%k + k*((v/(30*w.perBatch))%2)
		byKey[sk] = append(byKey[sk], ts)
	}
	for sk, times := range byKey {
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		// A key's rows are about six epochs apart while it is active (12
		// when a late row is dropped) and 30 or more apart across a rest;
		// its timeout fires some 23 epochs after its last row.
		var s session
		flush := func() {
			if s.n > 0 {
				res["gs_event"].Add(fmt.Sprintf("%d@%d", sk, s.first), s.n, strconv.FormatInt(s.last, 10))
			}
		}
		for _, t := range times {
			if s.n > 0 && t-s.last > 20_000 {
				flush()
				s = session{}
			}
			if s.n == 0 {
				s.first = t
			}
			s.last, s.n = t, s.n+1
		}
		flush()
	}
}

// nullInt is how Result shows gs_proc's null "last" column.
var nullInt = vector.FormatValue(nil, arrow.PrimitiveTypes.Int64)
