package plan

import (
	"fmt"
)

// StreamingError is a streaming query that breaks one of Spark's
// UnsupportedOperationChecker rules. Rule is a stable short name of the
// rule; Msg is Spark's message for it (docs/semantics.md §5.2).
type StreamingError struct {
	Rule string
	Msg  string
}

// Error renders "MSG [rule: RULE]".
func (e *StreamingError) Error() string { return e.Msg + " [rule: " + e.Rule + "]" }

// Unwrap makes errors.Is(err, ErrStreaming) hold.
func (e *StreamingError) Unwrap() error { return ErrStreaming }

// The rules CheckStreaming enforces.
const (
	RuleNoStreamingSource        = "no-streaming-source"
	RuleCompleteWithoutAgg       = "complete-without-aggregation"
	RuleAppendAggNoWatermark     = "append-aggregation-without-watermark"
	RuleDistinctAggregate        = "distinct-aggregate"
	RuleSessionWindowUpdate      = "session-window-update-mode"
	RuleSessionWindowGlobal      = "session-window-global-aggregation"
	RuleSortNotAfterAgg          = "sort-without-complete-aggregation"
	RuleLimitUpdate              = "limit-in-update-mode"
	RuleOffset                   = "offset"
	RuleUnionStreamBatch         = "union-streaming-and-batch"
	RuleStreamJoinMode           = "stream-stream-join-output-mode"
	RuleStreamJoinWatermark      = "stream-stream-outer-join-watermark"
	RuleStreamStaticJoin         = "stream-static-join-side"
	RuleMapGroupsMode            = "map-groups-with-state-output-mode"
	RuleFlatMapGroupsMode        = "flat-map-groups-with-state-output-mode"
	RuleEventTimeTimeoutNoWM     = "event-time-timeout-without-watermark"
	RuleMultipleStateful         = "multiple-stateful-operators-correctness"
	RuleDedupWithinWatermarkNoWM = "dedup-within-watermark-without-watermark"
	RuleNonTimeWindow            = "non-time-based-window"
)

func violation(rule, format string, args ...any) error {
	return &StreamingError{Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

// CheckStreaming checks a streaming plan against Spark's rules for its
// output mode (UnsupportedOperationChecker.checkForStreaming,
// docs/semantics.md §5.2). The engine calls it when it starts a query; the first violation
// is returned as a *StreamingError.
func CheckStreaming(n Node, mode OutputMode) error {
	if n == nil || !n.IsStreaming() {
		return violation(RuleNoStreamingSource, "Queries without streaming sources cannot be executed with writeStream.start()")
	}
	c := &streamChecker{mode: mode}
	c.collect(n)
	if err := c.checkModes(); err != nil {
		return err
	}
	return c.walk(n)
}

// CheckBatch checks that a batch plan reads no stream (batch queries run
// with Execute).
func CheckBatch(n Node) error {
	if n != nil && n.IsStreaming() {
		// Spark: "Queries with streaming sources must be executed with
		// writeStream.start()", which names an API SQL users do not have.
		return violation(RuleNoStreamingSource, "a streaming source needs a streaming table: use CREATE STREAMING TABLE name AS SELECT ... FROM STREAM ..., then query name")
	}
	return nil
}

type streamChecker struct {
	mode     OutputMode
	aggs     []*Aggregate
	flatMaps []*FlatMapGroupsWithState
}

// collect finds the streaming aggregations and flatMapGroupsWithState
// nodes.
func (c *streamChecker) collect(n Node) {
	switch x := n.(type) {
	case *Aggregate:
		if x.Input.IsStreaming() {
			c.aggs = append(c.aggs, x)
		}
	case *FlatMapGroupsWithState:
		if x.Input.IsStreaming() {
			c.flatMaps = append(c.flatMaps, x)
		}
	}
	for _, k := range n.Children() {
		c.collect(k)
	}
}

func (c *streamChecker) checkModes() error {
	if c.mode == Complete && len(c.aggs) == 0 {
		return violation(RuleCompleteWithoutAgg, "Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets")
	}
	for _, a := range c.aggs {
		for _, f := range a.Aggs {
			if mark, same := streamDistinct(f); f.Distinct && !mark && !same {
				return violation(RuleDistinctAggregate, "Distinct aggregations are not supported on streaming DataFrames/Datasets. Consider using approx_count_distinct() instead.")
			}
		}
		session := sessionKey(a)
		if session >= 0 && c.mode == Update {
			return violation(RuleSessionWindowUpdate, "Update output mode not supported for session window on streaming DataFrames/Datasets")
		}
		if session >= 0 && len(a.GroupBy) == 1 {
			return violation(RuleSessionWindowGlobal, "Global aggregation with session window in streaming query is not supported.")
		}
		if c.mode == Append && !hasWatermarkKey(a) {
			return violation(RuleAppendAggNoWatermark, "Append output mode not supported when there are streaming aggregations on streaming DataFrames/DataSets without watermark")
		}
	}
	maps := 0
	for _, f := range c.flatMaps {
		if f.MapGroups {
			maps++
		}
	}
	if maps > 0 && (maps > 1 || len(c.flatMaps) > maps) {
		return violation(RuleMapGroupsMode, "Multiple mapGroupsWithStates are not supported on a streaming DataFrames/Datasets, and mapGroupsWithState cannot be mixed with flatMapGroupsWithState")
	}
	for _, f := range c.flatMaps {
		if f.MapGroups {
			if c.mode != Update {
				return violation(RuleMapGroupsMode, "mapGroupsWithState is not supported with %s output mode on a streaming DataFrame/Dataset", c.mode)
			}
			continue
		}
		withAgg := len(c.aggs) > 0
		switch {
		case len(c.flatMaps) > 1 && (f.Mode != Append || c.mode != Append):
			return violation(RuleFlatMapGroupsMode, "Multiple flatMapGroupsWithStates are not supported when they are not all in append mode or the output mode is not append on a streaming DataFrames/Datasets")
		case withAgg && f.Mode != Append:
			return violation(RuleFlatMapGroupsMode, "flatMapGroupsWithState in %s mode is not supported with aggregation on a streaming DataFrame/Dataset", modeWord(f.Mode))
		case !withAgg && f.Mode != c.mode:
			return violation(RuleFlatMapGroupsMode, "flatMapGroupsWithState in %s mode is not supported with %s output mode on a streaming DataFrame/Dataset", modeWord(f.Mode), c.mode)
		}
	}
	return nil
}

func modeWord(m OutputMode) string {
	switch m {
	case Append:
		return "append"
	case Update:
		return "update"
	}
	return "complete"
}

// SessionKey returns the grouping key of a that is a session window (a
// column made by a SessionWindow below a), or -1.
func SessionKey(a *Aggregate) int { return sessionKey(a) }

// sessionKey returns the grouping key of a that is a session window, or -1.
func sessionKey(a *Aggregate) int {
	for i, k := range a.GroupBy {
		c, ok := k.Expr.(*ColumnRef)
		if !ok {
			continue
		}
		if producedBySessionWindow(a.Input, c.Index) {
			return i
		}
	}
	return -1
}

// producedBySessionWindow follows column col of n down through
// pass-through nodes to see whether a SessionWindow created it.
func producedBySessionWindow(n Node, col int) bool {
	for {
		switch x := n.(type) {
		case *SessionWindow:
			if col == x.Schema().NumFields()-1 {
				return true
			}
			n = x.Input
		case *Filter, *EventTimeWatermark, *SubqueryAlias, *Deduplicate, *Limit, *Sort:
			n = x.Children()[0]
		case *WindowAssign:
			if col == x.Schema().NumFields()-1 {
				return false
			}
			n = x.Input
		case *Explode:
			if col == x.Schema().NumFields()-1 {
				return false
			}
			n = x.Input
		case *Project:
			if col >= len(x.Exprs) {
				return false
			}
			r, ok := x.Exprs[col].Expr.(*ColumnRef)
			if !ok {
				return false
			}
			n, col = x.Input, r.Index
		default:
			return false
		}
	}
}

// hasWatermarkKey reports whether a grouping key carries the watermark
// (an event-time column, or a window over one).
func hasWatermarkKey(a *Aggregate) bool {
	in := a.Input.Schema()
	for _, k := range a.GroupBy {
		if c, ok := k.Expr.(*ColumnRef); ok && c.Index < in.NumFields() {
			if _, ok := WatermarkDelay(in.Field(c.Index)); ok {
				return true
			}
		}
	}
	return false
}

// walk checks the per-node rules.
func (c *streamChecker) walk(n Node) error {
	if w, ok := matchTopNAnalyzed(n); ok && w.IsStreaming() {
		_, _, _, why := topNSupport(w, c.mode)
		if err := c.walk(w.Input); err != nil || why == "" {
			return err // "": a streaming top-N (stream_topn.go)
		}
		if !(c.mode == Complete && containsStreamingAggregate(w.Input)) {
			return violation(RuleNonTimeWindow, "Non-time-based windows are not supported on streaming DataFrames/Datasets; row_number() <= N is, but here %s", why)
		}
	}
	for _, k := range n.Children() {
		if err := c.walk(k); err != nil {
			return err
		}
	}
	switch x := n.(type) {
	case *Sort:
		if x.IsStreaming() && !(c.mode == Complete && containsStreamingAggregate(x.Input)) {
			return violation(RuleSortNotAfterAgg, "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated DataFrame/Dataset in Complete output mode")
		}
	case *Window:
		// Spark refuses every non-time window on a stream; a Complete-mode
		// result is recomputed whole each epoch, so it is allowed there
		// (as a sort is).
		if x.IsStreaming() && !(c.mode == Complete && containsStreamingAggregate(x.Input)) {
			if _, why := overSupport(x, c.mode); why == "" {
				break // a streaming OVER (stream_over.go)
			} else if overShaped(x) {
				return violation(RuleNonTimeWindow, "Non-time-based windows are not supported on streaming DataFrames/Datasets; aggregates OVER a ROWS frame ending at the current row are, but here %s", why)
			}
			return violation(RuleNonTimeWindow, "Non-time-based windows are not supported on streaming DataFrames/Datasets")
		}
	case *Limit:
		if x.IsStreaming() {
			if x.Offset > 0 {
				return violation(RuleOffset, "Offset is not supported on streaming DataFrames/Datasets")
			}
			if c.mode == Update {
				return violation(RuleLimitUpdate, "Limits are not supported on streaming DataFrames/Datasets in Update output mode")
			}
		}
	case *Union:
		streams := 0
		for _, in := range x.Inputs {
			if in.IsStreaming() {
				streams++
			}
		}
		if streams > 0 && streams < len(x.Inputs) {
			return violation(RuleUnionStreamBatch, "Union between streaming and batch DataFrames/Datasets is not supported")
		}
	case *Join:
		if err := c.checkJoin(x); err != nil {
			return err
		}
	case *FlatMapGroupsWithState:
		if x.Timeout == EventTimeTimeout && len(EventTimeColumns(x.Input.Schema())) == 0 {
			return violation(RuleEventTimeTimeoutNoWM, "Watermark must be specified in the query using '[Dataset/DataFrame].withWatermark()' for using event-time timeout in a [map|flatMap]GroupsWithState. Event-time timeout not supported without watermark.")
		}
	case *Deduplicate:
		if x.WithinWatermark && len(EventTimeColumns(x.Input.Schema())) == 0 {
			return violation(RuleDedupWithinWatermarkNoWM, "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark")
		}
	case *EventTimeWatermark:
		if err := checkWatermarkNode(x); err != nil {
			return err
		}
	}
	if err := checkEventTimeColumns(n); err != nil {
		return err
	}
	if isStateful(n) {
		for _, k := range n.Children() {
			if c.emitsLateRows(k) {
				return violation(RuleMultipleStateful, "Detected pattern of possible 'correctness' issue due to global watermark. The query contains stateful operation which can emit rows older than the current watermark plus allowed late record delay, which are \"late rows\" in downstream stateful operations and these rows can be discarded. Please refer the programming guide doc for more details. If you understand the possible risk of correctness issue and still need to run the query, you can disable this check by setting the config `spark.sql.streaming.statefulOperator.checkCorrectness.enabled` to false.")
			}
		}
	}
	return nil
}

func containsStreamingAggregate(n Node) bool {
	if a, ok := n.(*Aggregate); ok && a.Input.IsStreaming() {
		return true
	}
	for _, k := range n.Children() {
		if containsStreamingAggregate(k) {
			return true
		}
	}
	return false
}

// isStateful reports whether n keeps streaming state: an aggregation,
// a dedup, a stream-stream join or flatMapGroupsWithState over a stream.
func isStateful(n Node) bool {
	switch x := n.(type) {
	case *Aggregate:
		return x.Input.IsStreaming()
	case *Deduplicate:
		return x.Input.IsStreaming()
	case *FlatMapGroupsWithState:
		return x.Input.IsStreaming()
	case *Join:
		return x.Left.IsStreaming() && x.Right.IsStreaming()
	}
	return false
}

// emitsLateRows reports whether a stateful operator at or below n (before
// the next stateful one) may emit rows behind the watermark: a streaming
// aggregation outside Append mode, or flatMapGroupsWithState with an
// event-time timeout.
func (c *streamChecker) emitsLateRows(n Node) bool {
	switch x := n.(type) {
	case *Aggregate:
		if x.Input.IsStreaming() {
			return c.mode != Append
		}
	case *FlatMapGroupsWithState:
		if x.Input.IsStreaming() {
			return x.Timeout == EventTimeTimeout
		}
	}
	if isStateful(n) {
		return false
	}
	for _, k := range n.Children() {
		if c.emitsLateRows(k) {
			return true
		}
	}
	return false
}

func (c *streamChecker) checkJoin(j *Join) error {
	ls, rs := j.Left.IsStreaming(), j.Right.IsStreaming()
	name := j.Type.String()
	switch {
	case ls && rs:
		if c.mode != Append {
			return violation(RuleStreamJoinMode, "%s join between two streaming DataFrames/Datasets is not supported in %s output mode, only in Append output mode", name, c.mode)
		}
		switch j.Type {
		case LeftOuterJoin, LeftSemiJoin:
			if !joinStateBounded(j, false) {
				return violation(RuleStreamJoinWatermark, "Stream-stream %s join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition", name)
			}
		case RightOuterJoin:
			if !joinStateBounded(j, true) {
				return violation(RuleStreamJoinWatermark, "Stream-stream %s join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition", name)
			}
		case FullOuterJoin:
			if !joinStateBounded(j, false) && !joinStateBounded(j, true) {
				return violation(RuleStreamJoinWatermark, "Stream-stream %s join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on one of the sides and an appropriate range condition", name)
			}
		case LeftAntiJoin:
			if !joinStateBounded(j, false) {
				return violation(RuleStreamJoinWatermark, "Stream-stream %s join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the right side and an appropriate range condition", name)
			}
		}
	case ls && !rs:
		switch j.Type {
		case RightOuterJoin:
			return violation(RuleStreamStaticJoin, "RightOuter join with a streaming DataFrame/Dataset on the left and a static DataFrame/Dataset on the right is not supported")
		case FullOuterJoin:
			return violation(RuleStreamStaticJoin, "FullOuter joins with streaming DataFrames/Datasets on the left and a static DataFrame/Dataset on the right is not supported")
		}
	case !ls && rs:
		switch j.Type {
		case LeftOuterJoin, LeftSemiJoin:
			return violation(RuleStreamStaticJoin, "%s join with a streaming DataFrame/Dataset on the right and a static DataFrame/Dataset on the left is not supported", name)
		case LeftAntiJoin:
			return violation(RuleStreamStaticJoin, "LeftAnti join with a streaming DataFrame/Dataset on the right is not supported")
		case FullOuterJoin:
			return violation(RuleStreamStaticJoin, "FullOuter joins with streaming DataFrames/Datasets on the right and a static DataFrame/Dataset on the left is not supported")
		}
	}
	return nil
}

// joinStateBounded reports whether the state of the nullable side (the
// right one, or the left one with leftNullable) can be evicted: a join key
// pair where both sides carry a watermark, or a watermark on the nullable
// side that the condition bounds with a range comparison against the other
// side.
func joinStateBounded(j *Join, leftNullable bool) bool {
	ls, rs := j.Left.Schema(), j.Right.Schema()
	nl := ls.NumFields()
	wm := func(i int) bool {
		if i < nl {
			_, ok := WatermarkDelay(ls.Field(i))
			return ok
		}
		_, ok := WatermarkDelay(rs.Field(i - nl))
		return ok
	}
	bounded := false
	for _, conj := range splitConjuncts(j.Cond) {
		c, ok := conj.(*Call)
		if !ok {
			continue
		}
		var l, r []int
		switch c.Func {
		case "=", "<=>":
			a, aok := c.Args[0].(*ColumnRef)
			b, bok := c.Args[1].(*ColumnRef)
			if aok && bok && (a.Index < nl) != (b.Index < nl) && (wm(a.Index) || wm(b.Index)) {
				bounded = true
			}
			continue
		case "<", "<=", ">", ">=":
			l, r = Columns(c.Args[0]), Columns(c.Args[1])
		case "between":
			l, r = Columns(c.Args[0]), append(Columns(c.Args[1]), Columns(c.Args[2])...)
		default:
			continue
		}
		cols := append(l, r...)
		left, right, nullableWM := false, false, false
		for _, i := range cols {
			if i < nl {
				left = true
			} else {
				right = true
			}
			if wm(i) && (i < nl) == leftNullable {
				nullableWM = true
			}
		}
		if left && right && nullableWM {
			bounded = true
		}
	}
	return bounded
}

// splitConjuncts splits a AND b AND c into its terms.
func splitConjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if c, ok := e.(*Call); ok && c.Func == "and" && len(c.Args) == 2 {
		return append(splitConjuncts(c.Args[0]), splitConjuncts(c.Args[1])...)
	}
	return []Expr{e}
}
