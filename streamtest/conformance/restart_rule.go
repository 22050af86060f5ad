package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/streamtest"
)

// RestartDependentDetail names the rule under which a scenario's answers
// may change with a restart after every epoch.
const RestartDependentDetail = "restart-dependent by spec (docs/semantics.md §3.2)"

// watermarkedInputs counts the streaming EventTimeWatermark nodes of an
// analyzed plan: the inputs the global watermark is computed over.
func watermarkedInputs(n plan.Node) int {
	if n == nil {
		return 0
	}
	count := 0
	if w, ok := n.(*plan.EventTimeWatermark); ok && w.IsStreaming() {
		count++
	}
	for _, c := range n.Children() {
		count += watermarkedInputs(c)
	}
	return count
}

// minPolicy reports whether the scenario runs with the min watermark
// policy (the default) given the runner's and the query's settings.
func (r *Runner) minPolicy(sc *Scenario) bool {
	policy := r.Conf[arrowstream.ConfWatermarkPolicy]
	if sc.Query != nil {
		if qc, err := queryConf(sc.Query.Options); err == nil {
			if p, ok := qc[arrowstream.ConfWatermarkPolicy]; ok {
				policy = p
			}
		}
	}
	return policy == "" || policy == "min"
}

// restartDependentBySpec is the rule: a query with two or more watermarked
// inputs under the min policy may answer differently (later) when
// restarted after every epoch, because per-input watermarks are not part
// of the checkpoint (docs/semantics.md §3.2, as Spark: after a restart the global
// watermark waits until every input has data again), so eviction, Append
// emission and outer null rows can come epochs later. Only the timing may
// differ, which eventualAnswersMatch verifies.
func (r *Runner) restartDependentBySpec(sc *Scenario, p plan.Node) bool {
	return watermarkedInputs(p) >= 2 && r.minPolicy(sc)
}

// flushRows is one row per source that moves every event-time column far
// ahead (numbers and timestamps 2^31-1, i.e. 2038 as seconds; strings a
// value no scenario uses, booleans null), so that a final epoch evicts and
// emits everything that any watermark still holds back. Strings are not
// null because a join on a string key infers "key IS NOT NULL", which the
// optimizer pushes below the watermark node (as Spark does): a null-keyed
// flush row would never reach the node and would not move the watermark.
const flushString = "\uffffflush"

func flushRows(sc *Scenario) ([]sourceRows, error) {
	var out []sourceRows
	for _, name := range sortedKeys(sc.Sources) {
		row := make([]any, len(sc.Sources[name]))
		for i, c := range sc.Sources[name] {
			switch strings.ToLower(c.Type) {
			case "int", "bigint", "double", "timestamp":
				row[i] = json.Number("2147483647")
			case "string":
				row[i] = flushString
			}
		}
		sr, err := sourceAdd(sc, name, [][]any{row})
		if err != nil {
			return nil, err
		}
		out = append(out, sr)
	}
	return out, nil
}

// eventualAnswersMatch runs the scenario's variant twice leniently
// (checks and assertions only let the query catch up), without and with a
// restart after every epoch, each ending with a flush epoch (flushRows on
// every source). It returns "" when the restarts changed only the timing
// of eviction: the restarted run's final sink content holds every row of
// the uninterrupted run's, and its extra rows (matches with state that an
// uninterrupted run had already evicted, which Spark's join allows) are
// rows of the all-at-once answer (every added row in one epoch, nothing
// late, nothing evicted before the flush). Otherwise it describes the
// difference. how says which of the two held.
func (r *Runner) eventualAnswersMatch(sc *Scenario, variant string) (how, why string) {
	var final [2][]streamtest.Row
	for i, restart := range []bool{false, true} {
		out := r.runVariant(sc, variant, runMode{restart: restart, eventual: true})
		if out.err != nil {
			return "", fmt.Sprintf("lenient run (restart=%v) failed: %s", restart, firstLine(out.err.Error()))
		}
		final[i] = out.final
	}
	if missing := streamtest.SubtractRows(final[0], final[1]); len(missing) > 0 {
		return "", "after a flush the restarted run lacks rows of the uninterrupted run: " + streamtest.FormatRows(missing)
	}
	extra := streamtest.SubtractRows(final[1], final[0])
	if len(extra) == 0 {
		return "the final sink content after a closing watermark on every input matches the uninterrupted run's", ""
	}
	all := r.runVariant(sc, variant, runMode{allAtOnce: true})
	if all.err != nil {
		return "", fmt.Sprintf("all-at-once run failed: %s", firstLine(all.err.Error()))
	}
	if bad := streamtest.SubtractRows(extra, all.final); len(bad) > 0 {
		return "", "after a flush the restarted run has rows that are not in the all-at-once answer: " + streamtest.FormatRows(bad)
	}
	return fmt.Sprintf("after a closing watermark on every input the sink holds every row of the uninterrupted run and %d more, all in the all-at-once answer (matches with state evicted later)", len(extra)), ""
}

// lenientKinds are the step kinds that only observe: in an eventual run
// they let the query catch up instead of asserting.
var lenientKinds = map[string]bool{
	"check": true, "assert_state_rows": true, "assert_last_progress_state": true, "assert_last_data_progress_state": true,
	"assert_event_time_stats": true, "assert_event_time_stats_empty": true, "await_progress_timestamp": true, "sink_assert": true,
}
