package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/streamtest/conformance/spec"
)

// The scenario types are those of package spec, the one reader of
// scenario files; the runner adds what the values mean.
type (
	// Scenario is one scenario of a conformance file.
	Scenario = spec.Scenario
	// Column is a column of a source, static table, sink or output.
	Column = spec.Column
	// StaticTable is a static table's columns and rows.
	StaticTable = spec.StaticTable
	// Query is the scenario's query: as DataFrame operations and/or SQL.
	Query = spec.Query
	// Op is one plan operation.
	Op = spec.Op
	// Step is one step: its action and its other fields.
	Step = spec.Step
)

// Decode reads a conformance file (spec.Decode) and validates every
// scenario (names, types, step kinds and their fields); the error names
// the scenario and step.
func Decode(data []byte) ([]*Scenario, error) {
	out, err := spec.Decode(data)
	if err != nil {
		return nil, err
	}
	if err := validateAll(out); err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	return out, nil
}

// Load reads scenarios from files and directories (their *.json files,
// in name order) with spec.Load and validates them as Decode does; the
// error names the file.
func Load(paths ...string) ([]*Scenario, error) {
	out, err := spec.Load(paths...)
	if err != nil {
		return nil, err
	}
	if err := validateAll(out); err != nil {
		return nil, err
	}
	return out, nil
}

// validateAll validates scenarios; an error names the file (when the
// scenario has one), the scenario's index in its file and its name.
func validateAll(scs []*Scenario) error {
	i, file := 0, ""
	for _, sc := range scs {
		if sc.File != file {
			i, file = 0, sc.File
		}
		if err := validate(sc); err != nil {
			if file != "" {
				return fmt.Errorf("%s: conformance: scenario %d (%s): %w", file, i, sc.Name, err)
			}
			return fmt.Errorf("scenario %d (%s): %w", i, sc.Name, err)
		}
		i++
	}
	return nil
}

func validate(sc *Scenario) error {
	for name, cols := range sc.Sources {
		if err := validateColumns(cols, false); err != nil {
			return fmt.Errorf("source %s: %w", name, err)
		}
	}
	for name, t := range sc.Static {
		if err := validateColumns(t.Columns, false); err != nil {
			return fmt.Errorf("static table %s: %w", name, err)
		}
		if _, err := convertRows(t.Columns, t.Rows); err != nil {
			return fmt.Errorf("static table %s: %w", name, err)
		}
	}
	// A query's result may repeat a column name (a self-join, SELECT * over
	// a join): Spark's sink rows have them, and rows compare by position.
	if err := validateColumns(sc.Output, true); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := validateColumns(sc.SinkColumns, false); err != nil {
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

// validateColumns checks names and types; allowDup admits repeated names.
func validateColumns(cols []Column, allowDup bool) error {
	seen := map[string]bool{}
	for i, c := range cols {
		if c.Name == "" {
			return fmt.Errorf("column %d has no name", i)
		}
		if _, err := arrowType(c.Type); err != nil {
			return fmt.Errorf("column %s: %w", c.Name, err)
		}
		if seen[strings.ToLower(c.Name)] && !allowDup {
			return fmt.Errorf("duplicate column %s", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
	}
	return nil
}

// Unsupported returns why the engine cannot run sc, or "": the
// runner reports such scenarios as skipped (flatMapGroupsWithState
// functions the runner does not implement; stream-stream anti joins are
// detected on the analyzed plan).
func Unsupported(sc *Scenario) string {
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
