package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// Entry is one group of an output: Weight is how many input records it
// accounts for (1 per row of an append-only projection, the count of an
// aggregate), Value the rest of the row as text.
type Entry struct {
	Weight int64  `json:"w"`
	Value  string `json:"v,omitempty"`
}

// Output is one output of a workload keyed by group (the row itself for
// a projection, the grouping key for an aggregate). Rows with equal keys
// add their weights, so a duplicated row shows as weight 2.
type Output map[string]Entry

// Add accounts for one row.
func (o Output) Add(key string, weight int64, value string) {
	e := o[key]
	e.Weight += weight
	if e.Value == "" {
		e.Value = value
	} else if value != e.Value {
		e.Value += "|" + value
	}
	o[key] = e
}

// Weight is the total weight of the output.
func (o Output) Weight() int64 {
	var n int64
	for _, e := range o {
		n += e.Weight
	}
	return n
}

// Result is what a workload produced: its outputs by name.
type Result map[string]Output

func writeResult(path string, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("chaos: write %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

func readResult(path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chaos: read result: %w", err)
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("chaos: %s: %w", path, err)
	}
	return r, nil
}

// Diff is how an output differs from the reference.
type Diff struct {
	// Lost and Duplicated count input records (weights) missing from or
	// present more than once in the output.
	Lost, Duplicated int64
	// Mismatched counts groups with the right weight but another value.
	Mismatched int64
	// Examples lists a few differing groups, for the report.
	Examples []string
}

// Compare compares got with want output by output.
func Compare(want, got Result) map[string]Diff {
	out := map[string]Diff{}
	for name, w := range want {
		g := got[name]
		var d Diff
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			we, ge := w[k], g[k]
			switch {
			case ge.Weight < we.Weight:
				d.Lost += we.Weight - ge.Weight
			case ge.Weight > we.Weight:
				d.Duplicated += ge.Weight - we.Weight
			case ge.Value != we.Value:
				d.Mismatched++
			default:
				continue
			}
			if len(d.Examples) < 5 {
				d.Examples = append(d.Examples, fmt.Sprintf("%s: want %d×%q, got %d×%q", k, we.Weight, we.Value, ge.Weight, ge.Value))
			}
		}
		out[name] = d
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			out[name] = Diff{Duplicated: g.Weight(), Examples: []string{"output missing from the reference run"}}
		}
	}
	return out
}
