package chaos

import (
	"errors"
	"testing"
)

func TestCompare(t *testing.T) {
	out := func(rows ...any) Output {
		o := Output{}
		for i := 0; i < len(rows); i += 3 {
			o.Add(rows[i].(string), int64(rows[i+1].(int)), rows[i+2].(string))
		}
		return o
	}
	cases := []struct {
		name                  string
		want, got             Output
		lost, dup, mismatched int64
	}{
		{"equal", out("a", 1, "x", "b", 2, "y"), out("b", 2, "y", "a", 1, "x"), 0, 0, 0},
		{"row lost", out("a", 1, "x", "b", 1, "y"), out("a", 1, "x"), 1, 0, 0},
		{"row twice", out("a", 1, "x"), out("a", 1, "x", "a", 1, "x"), 0, 1, 0},
		{"count short", out("k", 5, "s=10"), out("k", 3, "s=6"), 2, 0, 0},
		{"count over", out("k", 5, "s=10"), out("k", 7, "s=14"), 0, 2, 0},
		{"unexpected group", out("a", 1, ""), out("a", 1, "", "z", 4, ""), 0, 4, 0},
		{"value differs", out("k", 5, "s=10"), out("k", 5, "s=11"), 0, 0, 1},
	}
	for _, c := range cases {
		d := Compare(Result{"o": c.want}, Result{"o": c.got})["o"]
		if d.Lost != c.lost || d.Duplicated != c.dup || d.Mismatched != c.mismatched {
			t.Errorf("%s: %+v, want lost %d duplicated %d mismatched %d", c.name, d, c.lost, c.dup, c.mismatched)
		}
	}
	// An output missing from the run counts as all lost.
	if d := Compare(Result{"o": out("a", 3, "")}, Result{})["o"]; d.Lost != 3 {
		t.Errorf("missing output: %+v", d)
	}
}

func TestNewWorkload(t *testing.T) {
	cases := []struct {
		name    string
		records int64
		missing bool // ErrConnectorMissing
		ok      bool
	}{
		{"memsink", 10, false, true},
		{"MEMSINK", 10, false, true},
		{"files", 10, false, true},
		{"kafka", 10, false, true},
		{"socket", 10, false, false},
		{"memsink", 0, false, false},
	}
	for _, c := range cases {
		w, err := NewWorkload(c.name, c.records)
		if (err == nil) != c.ok || errors.Is(err, ErrConnectorMissing) != c.missing {
			t.Errorf("%s/%d: %v, %v", c.name, c.records, w, err)
		}
	}
}

func TestFileKind(t *testing.T) {
	cases := map[string]string{
		"/r/checkpoints/proj/epochlog/0.seg":              "epoch log",
		"/r/checkpoints/proj/offsets/12":                  "offsets",
		"/r/checkpoints/proj/commits/3":                   "commits",
		"/r/checkpoints/proj/metadata":                    "metadata",
		"/r/checkpoints/counts/state/0/1/7.delta":         "state delta",
		"/r/checkpoints/counts/state/_log/1.seg":          "state log",
		"/r/checkpoints/counts/state/0/1/11.snapshot":     "state snapshot",
		"/r/checkpoints/counts/state/0/1/23.11.segment":   "state snapshot segment",
		"/r/checkpoints/counts/state/0/_metadata/schema":  "state other (schema)",
		"/r/checkpoints/counts/sinks/memory/4.arrow":      "memsink epoch",
		"/r/checkpoints/counts/sinks/memory/9.view.arrow": "memsink view",
	}
	for path, want := range cases {
		if got := fileKind("/r", path); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
