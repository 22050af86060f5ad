package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
)

// checkContinuous applies the unsupported-operation rules of continuous
// processing (docs/semantics.md §5.2, last item; Spark's
// UnsupportedOperationChecker.checkForContinuous): only map-like operators
// (projections, filters, explode, unions, stream-static joins) and no
// current time. Beyond Spark, one aggregation in Update mode is allowed
// (with its window assignment and watermark below it): it runs once per
// epoch with its state committed per epoch. It reports whether the plan
// has such an aggregation.
func checkContinuous(root plan.Node, mode stream.OutputMode) (stateful bool, err error) {
	var walk func(n plan.Node, underAgg bool) error
	walk = func(n plan.Node, underAgg bool) error {
		if err := checkNoCurrentTime(n); err != nil {
			return err
		}
		switch x := n.(type) {
		case *plan.Scan, *plan.SubqueryAlias, *plan.Project, *plan.Filter, *plan.Explode, *plan.Union, *plan.Values:
		case *plan.Join:
			if x.Left.IsStreaming() && x.Right.IsStreaming() {
				return fmt.Errorf("arrowstream: Continuous processing does not support stream-stream join operations (only stream-static joins)")
			}
		case *plan.Aggregate:
			if !n.IsStreaming() {
				break
			}
			if mode != stream.Update {
				return fmt.Errorf("arrowstream: Continuous processing supports aggregations only in Update output mode (the query uses %s)", mode)
			}
			if stateful {
				return fmt.Errorf("arrowstream: Continuous processing supports at most one aggregation per query")
			}
			stateful = true
			underAgg = true
		case *plan.EventTimeWatermark, *plan.WindowAssign:
			if !underAgg {
				return fmt.Errorf("arrowstream: Continuous processing does not support %s operations outside an Update-mode aggregation", nodeKind(n))
			}
		default:
			if n.IsStreaming() {
				return fmt.Errorf("arrowstream: Continuous processing does not support %s operations", nodeKind(n))
			}
		}
		for _, c := range n.Children() {
			if err := walk(c, underAgg); err != nil {
				return err
			}
		}
		return nil
	}
	return stateful, walk(root, false)
}

// nodeKind names a plan node's operation ("Deduplicate", "Limit").
func nodeKind(n plan.Node) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", n), "*plan.")
}

// checkNoCurrentTime rejects current_timestamp() (and what derives from
// it) in n's own expressions: continuous epochs have no batch timestamp.
func checkNoCurrentTime(n plan.Node) error {
	var exprs []plan.Expr
	switch x := n.(type) {
	case *plan.Project:
		for _, e := range x.Exprs {
			exprs = append(exprs, e.Expr)
		}
	case *plan.Filter:
		exprs = append(exprs, x.Cond)
	case *plan.Join:
		exprs = append(exprs, x.Cond)
	case *plan.Explode:
		exprs = append(exprs, x.Expr)
	case *plan.WindowAssign:
		exprs = append(exprs, x.Time)
	case *plan.Aggregate:
		for _, e := range x.GroupBy {
			exprs = append(exprs, e.Expr)
		}
		for _, a := range x.Aggs {
			exprs = append(exprs, a.Args...)
		}
	}
	var has func(e plan.Expr) bool
	has = func(e plan.Expr) bool {
		if e == nil {
			return false
		}
		if _, ok := e.(*plan.CurrentTimestamp); ok {
			return true
		}
		for _, c := range e.Children() {
			if has(c) {
				return true
			}
		}
		return false
	}
	for _, e := range exprs {
		if has(e) {
			return fmt.Errorf("arrowstream: Continuous processing does not support current time operations (%s)", e)
		}
	}
	return nil
}

// ContinuousOptions checks a continuous query and reads its writer
// options: "continuous.visibility" ("commit", the default: rows appear
// when their epoch commits; "arrival": as they are processed, through an
// ArrivalSink), "continuous.maxPendingBytes" and "continuous.pollInterval"
// (how often sources that cannot notify are asked for data).
func ContinuousOptions(root plan.Node, mode stream.OutputMode, opts map[string]string) (ContinuousConfig, error) {
	cfg := ContinuousConfig{MaxPendingBytes: DefaultContinuousMaxPendingBytes, PollInterval: continuousPollInterval}
	stateful, err := checkContinuous(root, mode)
	if err != nil {
		return cfg, err
	}
	cfg.Stateful = stateful
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "continuous.visibility":
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "commit":
			case "arrival":
				if stateful {
					return cfg, fmt.Errorf("arrowstream: option continuous.visibility=arrival: an aggregation's rows are produced once per epoch, at its commit")
				}
				cfg.Arrival = true
			default:
				return cfg, fmt.Errorf("arrowstream: option continuous.visibility=%q: want commit or arrival", v)
			}
		case "continuous.maxpendingbytes":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n <= 0 {
				return cfg, fmt.Errorf("arrowstream: option continuous.maxPendingBytes=%q: want a positive number of bytes", v)
			}
			cfg.MaxPendingBytes = n
		case "continuous.pollinterval":
			d, err := stream.ParseDuration(v)
			if err != nil || d <= 0 {
				return cfg, fmt.Errorf("arrowstream: option continuous.pollInterval=%q: want a positive duration such as '5 ms'", v)
			}
			cfg.PollInterval = d
		}
	}
	return cfg, nil
}
