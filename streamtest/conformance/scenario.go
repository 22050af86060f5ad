package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Scenario is one scenario of a conformance file (FORMAT.md).
type Scenario struct {
	Name        string                 `json:"name"`
	Origin      string                 `json:"origin"`
	Category    string                 `json:"category"`
	Description string                 `json:"description"`
	Sources     map[string][]Column    `json:"sources"`
	Static      map[string]StaticTable `json:"static"`
	Query       *Query                 `json:"query"`
	Output      []Column               `json:"output"`
	SinkColumns []Column               `json:"sink_columns"`
	Requires    []string               `json:"requires"`
	Steps       []Step                 `json:"steps"`

	// File is the file the scenario was read from.
	File string `json:"-"`
}

// Column is a column of a source, static table, sink or output.
type Column struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable *bool  `json:"nullable"`
}

// StaticTable is a static table's columns and rows.
type StaticTable struct {
	Columns []Column `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Query is the scenario's query: as DataFrame operations and/or SQL.
type Query struct {
	Plan       []Op                       `json:"plan"`
	SQL        string                     `json:"sql"`
	OutputMode string                     `json:"output_mode"`
	Options    map[string]json.RawMessage `json:"options"`
}

// Op is one plan operation: a JSON object with one operation key (and
// "agg" next to "group_by").
type Op map[string]json.RawMessage

// Step is one step: its action and the step's other fields, decoded by
// the step's kind when the scenario is run.
type Step struct {
	Action string
	Fields map[string]json.RawMessage
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Step) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	raw, ok := m["action"]
	if !ok {
		return errors.New("step without an action")
	}
	if err := json.Unmarshal(raw, &s.Action); err != nil {
		return fmt.Errorf("action: %w", err)
	}
	delete(m, "action")
	s.Fields = m
	return nil
}

// MarshalJSON implements json.Marshaler.
func (s Step) MarshalJSON() ([]byte, error) {
	m := map[string]json.RawMessage{}
	for k, v := range s.Fields {
		m[k] = v
	}
	a, _ := json.Marshal(s.Action)
	m["action"] = a
	return json.Marshal(m)
}

// Decode reads a conformance file: a JSON array of scenarios. Numbers
// keep their text (json.Number). Every scenario is validated (names,
// types, step kinds and their fields); the error names the scenario and
// step.
func Decode(data []byte) ([]*Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []*Scenario
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	if dec.More() {
		return nil, errors.New("conformance: data after the scenario array")
	}
	seen := map[string]bool{}
	for i, sc := range out {
		if sc == nil {
			return nil, fmt.Errorf("conformance: scenario %d is null", i)
		}
		if err := sc.validate(); err != nil {
			return nil, fmt.Errorf("conformance: scenario %d (%s): %w", i, sc.Name, err)
		}
		if seen[sc.Name] {
			return nil, fmt.Errorf("conformance: scenario %d: duplicate name %q", i, sc.Name)
		}
		seen[sc.Name] = true
	}
	return out, nil
}

// Load reads scenarios from files and directories (their *.json files,
// in name order).
func Load(paths ...string) ([]*Scenario, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("conformance: %s: %w", p, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("conformance: %s: no *.json files", p)
		}
		sort.Strings(matches)
		files = append(files, matches...)
	}
	var out []*Scenario
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("conformance: %w", err)
		}
		scs, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, sc := range scs {
			sc.File = f
		}
		out = append(out, scs...)
	}
	return out, nil
}

func (sc *Scenario) validate() error {
	if strings.TrimSpace(sc.Name) == "" {
		return errors.New("no name")
	}
	for name, cols := range sc.Sources {
		if err := validateColumns(cols); err != nil {
			return fmt.Errorf("source %s: %w", name, err)
		}
	}
	for name, t := range sc.Static {
		if err := validateColumns(t.Columns); err != nil {
			return fmt.Errorf("static table %s: %w", name, err)
		}
		if _, err := convertRows(t.Columns, t.Rows); err != nil {
			return fmt.Errorf("static table %s: %w", name, err)
		}
	}
	if err := validateColumns(sc.Output); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := validateColumns(sc.SinkColumns); err != nil {
		return fmt.Errorf("sink_columns: %w", err)
	}
	if q := sc.Query; q != nil {
		if len(q.Plan) == 0 && q.SQL == "" {
			return errors.New("query has neither plan nor sql")
		}
		if _, err := parseOutputMode(q.OutputMode); err != nil {
			return err
		}
		if err := validateOps(q.Plan, true); err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if _, err := queryConf(q.Options); err != nil {
			return err
		}
	} else if len(sc.SinkColumns) == 0 {
		return errors.New("neither a query nor sink_columns")
	}
	if len(sc.Steps) == 0 {
		return errors.New("no steps")
	}
	for i, st := range sc.Steps {
		if err := validateStep(sc, st); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, st.Action, err)
		}
	}
	return nil
}

func validateColumns(cols []Column) error {
	seen := map[string]bool{}
	for i, c := range cols {
		if c.Name == "" {
			return fmt.Errorf("column %d has no name", i)
		}
		if _, err := arrowType(c.Type); err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		if seen[strings.ToLower(c.Name)] {
			return fmt.Errorf("duplicate column %s", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
	}
	return nil
}

// Unsupported returns why the engine cannot run the scenario, or "": the
// runner reports such scenarios as skipped (flatMapGroupsWithState
// functions the runner does not implement; stream-stream joins are
// detected on the analyzed plan).
func (sc *Scenario) Unsupported() string {
	var names []string
	if sc.Query != nil {
		names = planGroupStateFuncs(sc.Query.Plan)
	}
	for _, line := range strings.Split(sc.Description, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "function ") && strings.Contains(line, ":") {
			names = append(names, strings.TrimSpace(strings.TrimPrefix(line[:strings.Index(line, ":")], "function ")))
		}
	}
	for _, name := range names {
		if _, ok := groupFuncs[name]; !ok {
			return fmt.Sprintf("flatMapGroupsWithState / mapGroupsWithState function %q is not implemented by the runner", name)
		}
	}
	return ""
}

// planGroupStateFuncs returns the functions a plan's group-state
// operations name.
func planGroupStateFuncs(ops []Op) []string {
	var names []string
	for _, op := range ops {
		for _, key := range []string{"flat_map_groups_with_state", "map_groups_with_state"} {
			if raw, ok := op[key]; ok {
				var g groupStateSpec
				_ = json.Unmarshal(raw, &g)
				names = append(names, g.Function)
			}
		}
		for _, key := range []string{"union", "join"} {
			raw, ok := op[key]
			if !ok {
				continue
			}
			var sub []Op
			if key == "join" {
				var j struct {
					Right []Op `json:"right"`
				}
				if json.Unmarshal(raw, &j) == nil {
					sub = j.Right
				}
			} else if json.Unmarshal(raw, &sub) != nil {
				continue
			}
			names = append(names, planGroupStateFuncs(sub)...)
		}
	}
	return names
}
