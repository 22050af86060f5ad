package chaos

import (
	"strconv"
	"strings"
	"testing"
)

// TestStatefulModelShape: the model of the stateful workload has rows of
// every kind the workload is meant to exercise, so that the reference's
// agreement with it says something: pairs matched across epochs, outer
// rows of both sides, late rows left out, re-emitted dedup_within keys,
// several sessions of a gs_event key.
func TestStatefulModelShape(t *testing.T) {
	w := newStatefulWorkload(6000)
	m := w.Model()
	for _, q := range w.queries() {
		if m[q].Weight() == 0 {
			t.Errorf("%s: empty model", q)
		}
	}
	has := func(out, substr string) bool {
		for k := range m[out] {
			if strings.Contains(k, substr) {
				return true
			}
		}
		return false
	}
	p := w.perBatch
	// Right value 2p+1 joins left value 1 two epochs earlier.
	for _, want := range []struct{ out, sub string }{
		{"join_inner", "'1-" + itoa(2*p+1) + "'"},
		{"join_left", "-null'"}, {"join_right", "'null-"}, {"join_full", "-null'"}, {"join_full", "'null-"},
	} {
		if !has(want.out, want.sub) {
			t.Errorf("%s: no row like %s", want.out, want.sub)
		}
	}
	// Late rows: a left value past epoch 10 with v % 7 == 3 is in no join
	// output (the left side drops it).
	late := 10*p + (3-10*p%7+7)%7
	if has("join_left", "'"+itoa(late)+"-") {
		t.Errorf("late left row %d in join_left", late)
	}
	if got := m["gs_proc"].Weight(); got != 6000 {
		t.Errorf("gs_proc weight %d, want every record", got)
	}
	if m["gs_event"].Weight() >= 6000 || len(m["gs_event"]) <= int(w.gsKeys()) {
		t.Errorf("gs_event: weight %d (late rows must be left out), %d sessions (keys must have several)", m["gs_event"].Weight(), len(m["gs_event"]))
	}
	if n := len(m["dedup_within"]); n <= 6000/2-6000/13 || n >= 6000 {
		t.Errorf("dedup_within: %d rows", n)
	}
}

// TestCheckModel: a reference run that lost a row, or counted one twice,
// is reported against the model even when the chaos run agrees with it.
func TestCheckModel(t *testing.T) {
	w := newStatefulWorkload(3000)
	ref := w.Model()
	var victim string
	for k := range ref["join_inner"] {
		victim = k
		break
	}
	delete(ref["join_inner"], victim)
	for k, e := range ref["dedup"] {
		e.Weight++
		ref["dedup"][k] = e
		break
	}
	d := checkModel(w, ref)
	if got := d["join_inner (reference vs model)"]; got.Lost != 1 || got.Duplicated != 0 {
		t.Errorf("join_inner: %+v, want 1 lost", got)
	}
	if got := d["dedup (reference vs model)"]; got.Duplicated != 1 || got.Lost != 0 {
		t.Errorf("dedup: %+v, want 1 duplicated", got)
	}
	if got := d["gs_event (reference vs model)"]; got.Lost+got.Duplicated+got.Mismatched != 0 {
		t.Errorf("gs_event: %+v, want no difference", got)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
