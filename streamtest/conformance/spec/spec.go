package spec

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

// Scenario is one scenario of a conformance file.
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

	// File is the file the scenario was read from ("" after Decode).
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
	m := make(map[string]json.RawMessage, len(s.Fields)+1)
	for k, v := range s.Fields {
		m[k] = v
	}
	a, err := json.Marshal(s.Action)
	if err != nil {
		return nil, err
	}
	m["action"] = a
	return json.Marshal(m)
}

// Decode reads a conformance file: a JSON array of scenarios. Numbers keep
// their text (json.Number). It checks the file's shape: no null
// scenario, every scenario named, names unique; the error names the
// scenario.
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
	seen := make(map[string]bool, len(out))
	for i, sc := range out {
		if sc == nil {
			return nil, fmt.Errorf("conformance: scenario %d is null", i)
		}
		if strings.TrimSpace(sc.Name) == "" {
			return nil, fmt.Errorf("conformance: scenario %d (%s): no name", i, sc.Name)
		}
		if seen[sc.Name] {
			return nil, fmt.Errorf("conformance: scenario %d: duplicate name %q", i, sc.Name)
		}
		seen[sc.Name] = true
	}
	return out, nil
}

// Files returns the scenario files paths name: a file as given, a
// directory as its *.json files in name order.
func Files(paths ...string) ([]string, error) {
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
	return files, nil
}

// Load reads the scenarios of files and directories (see Files), each
// with File set; an error names the file.
func Load(paths ...string) ([]*Scenario, error) {
	files, err := Files(paths...)
	if err != nil {
		return nil, err
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

// Generic returns the operations as plain JSON values (objects as
// map[string]any, numbers as float64), for code that walks a plan
// without knowing every operation's arguments.
func Generic(ops []Op) ([]map[string]any, error) {
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("conformance: plan: %w", err)
	}
	var out []map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("conformance: plan: %w", err)
	}
	return out, nil
}
