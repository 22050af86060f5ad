package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/plan"
)

// opKeys are the plan operations of
// streamtest/testdata/conformance/FORMAT.md.
var opKeys = map[string]bool{
	"read": true, "read_static": true, "select": true, "with_column": true, "to_df": true, "filter": true,
	"with_watermark": true, "group_by": true, "drop_duplicates": true, "drop_duplicates_within_watermark": true,
	"join": true, "union": true, "limit": true, "order_by": true,
	"flat_map_groups_with_state": true, "map_groups_with_state": true,
}

// opName returns an operation's key, checking that it has exactly one
// (group_by also has agg).
func opName(op Op) (string, error) {
	var names []string
	for k := range op {
		if k == "agg" {
			continue
		}
		if !opKeys[k] {
			return "", fmt.Errorf("unknown operation %q", k)
		}
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) != 1 {
		return "", fmt.Errorf("an operation needs exactly one kind, got %v", names)
	}
	if _, hasAgg := op["agg"]; hasAgg != (names[0] == "group_by") {
		return "", errors.New("agg goes with group_by, and only with it")
	}
	return names[0], nil
}

// joinSpec is the argument of a join operation.
type joinSpec struct {
	Right []Op            `json:"right"`
	On    json.RawMessage `json:"on"`
	Type  string          `json:"type"`
}

// groupStateSpec is the argument of flat_map_groups_with_state.
type groupStateSpec struct {
	Key        string `json:"key"`
	Function   string `json:"function"`
	OutputMode string `json:"output_mode"`
	Timeout    string `json:"timeout"`
}

// validateOps checks a plan's shape: a first op reading a source, known
// operations with well-formed arguments.
func validateOps(ops []Op, top bool) error {
	for i, op := range ops {
		name, err := opName(op)
		if err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
		isRead := name == "read" || name == "read_static"
		if (i == 0) != isRead {
			return fmt.Errorf("op %d (%s): a plan starts with read or read_static, and only its first op reads", i, name)
		}
		if err := validateArg(name, op); err != nil {
			return fmt.Errorf("op %d (%s): %w", i, name, err)
		}
	}
	if top && len(ops) > 0 {
		if _, err := opName(ops[0]); err == nil {
			if _, ok := ops[0]["read"]; !ok {
				return errors.New("the plan must read a stream first")
			}
		}
	}
	return nil
}

func validateArg(name string, op Op) error {
	raw := op[name]
	var err error
	switch name {
	case "read", "read_static", "filter":
		var s string
		err = decodeJSON(raw, &s)
	case "select", "to_df", "order_by", "drop_duplicates", "drop_duplicates_within_watermark":
		var l []string
		err = decodeJSON(raw, &l)
	case "with_column", "with_watermark":
		var l []string
		if err = decodeJSON(raw, &l); err == nil && len(l) != 2 {
			err = fmt.Errorf("want [name, expression], got %d strings", len(l))
		}
	case "group_by":
		var keys, aggs []string
		if err = decodeJSON(raw, &keys); err == nil {
			err = decodeJSON(op["agg"], &aggs)
		}
	case "limit":
		var n json.Number
		if err = decodeJSON(raw, &n); err == nil {
			if v, perr := n.Int64(); perr != nil || v < 0 {
				err = fmt.Errorf("limit %s is not a non-negative integer", n)
			}
		}
	case "union":
		var sub []Op
		if err = decodeJSON(raw, &sub); err == nil {
			err = validateOps(sub, false)
		}
	case "join":
		var j joinSpec
		if err = decodeJSON(raw, &j); err == nil {
			if _, _, err = joinOn(j.On); err == nil {
				err = validateOps(j.Right, false)
			}
		}
	case "flat_map_groups_with_state", "map_groups_with_state":
		var g groupStateSpec
		err = decodeJSON(raw, &g)
	}
	return err
}

// joinOn reads a join's condition: an expression or a list of columns.
func joinOn(raw json.RawMessage) (string, []string, error) {
	var expr string
	if decodeJSON(raw, &expr) == nil {
		return expr, nil, nil
	}
	var cols []string
	if err := decodeJSON(raw, &cols); err != nil || len(cols) == 0 {
		return "", nil, errors.New(`join "on" must be an expression or a non-empty list of columns`)
	}
	return "", cols, nil
}

// buildPlan builds a plan's operations with the DataFrame API (validated
// ops; errors are kept by the DataFrame).
func buildPlan(sess *arrowstream.Session, ops []Op) *arrowstream.DataFrame {
	var df *arrowstream.DataFrame
	strs := func(raw json.RawMessage) []string {
		var l []string
		_ = decodeJSON(raw, &l)
		return l
	}
	str := func(raw json.RawMessage) string {
		var s string
		_ = decodeJSON(raw, &s)
		return s
	}
	for _, op := range ops {
		name, _ := opName(op)
		raw := op[name]
		switch name {
		case "read":
			df = sess.ReadStream(str(raw))
		case "read_static":
			df = sess.Table(str(raw))
		case "select":
			df = df.Select(strs(raw)...)
		case "with_column":
			a := strs(raw)
			df = df.WithColumn(a[0], a[1])
		case "to_df":
			df = df.ToDF(strs(raw)...)
		case "filter":
			df = df.Filter(str(raw))
		case "with_watermark":
			a := strs(raw)
			df = df.WithWatermark(a[0], a[1])
		case "group_by":
			df = df.GroupBy(strs(raw)...).Agg(strs(op["agg"])...)
		case "drop_duplicates":
			df = df.DropDuplicates(strs(raw)...)
		case "drop_duplicates_within_watermark":
			df = df.DropDuplicatesWithinWatermark(strs(raw)...)
		case "join":
			var j joinSpec
			_ = decodeJSON(raw, &j)
			right := buildPlan(sess, j.Right)
			typ := j.Type
			if typ == "" {
				typ = "inner"
			}
			if expr, cols, _ := joinOn(j.On); cols != nil {
				df = df.JoinUsing(right, cols, typ)
			} else {
				df = df.Join(right, expr, typ)
			}
		case "union":
			var sub []Op
			_ = decodeJSON(raw, &sub)
			df = df.Union(buildPlan(sess, sub))
		case "limit":
			var n json.Number
			_ = decodeJSON(raw, &n)
			v, _ := n.Int64()
			df = df.Limit(v)
		case "order_by":
			df = df.OrderBy(strs(raw)...)
		case "flat_map_groups_with_state", "map_groups_with_state":
			var g groupStateSpec
			_ = decodeJSON(raw, &g)
			df = groupState(df, g, name == "map_groups_with_state")
		}
	}
	return df
}

// unsupportedPlan returns why the engine cannot run an analyzed plan
// (a stream-stream join), or "".
func unsupportedPlan(n plan.Node) string {
	if n == nil {
		return ""
	}
	if j, ok := n.(*plan.Join); ok && j.Left.IsStreaming() && j.Right.IsStreaming() && j.Type == plan.LeftAntiJoin {
		return "stream-stream anti joins are not supported by the engine yet"
	}
	for _, c := range n.Children() {
		if r := unsupportedPlan(c); r != "" {
			return r
		}
	}
	return ""
}

// statefulPlan reports whether an analyzed streaming plan keeps state
// across epochs (aggregation, deduplication, limit, joins of streams,
// session windows, group state).
func statefulPlan(n plan.Node) bool {
	if n == nil {
		return false
	}
	if n.IsStreaming() {
		switch x := n.(type) {
		case *plan.Aggregate, *plan.Deduplicate, *plan.Limit, *plan.SessionWindow, *plan.FlatMapGroupsWithState:
			return true
		case *plan.Join:
			if x.Left.IsStreaming() && x.Right.IsStreaming() {
				return true
			}
		}
	}
	for _, c := range n.Children() {
		if statefulPlan(c) {
			return true
		}
	}
	return false
}

// describeOps renders a plan's ops compactly for -v output.
func describeOps(ops []Op) string {
	parts := make([]string, 0, len(ops))
	for _, op := range ops {
		name, _ := opName(op)
		parts = append(parts, name)
	}
	return strings.Join(parts, " → ")
}
