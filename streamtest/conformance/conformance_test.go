package conformance_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/streamtest/conformance"
)

const testdata = "../testdata/conformance"

// knownFailures are scenarios the engine supports in principle but fails
// today, with the root cause. The test fails when one starts passing, so
// that the entry is removed.
var knownFailures = map[string]string{}

// restartDependent are the scenarios the runner classifies, by its rule
// (two or more watermarked inputs under the min policy, docs/semantics.md
// §3.2),
// as restart-dependent in -restart mode: per-input watermarks are not
// persisted, so after a restart eviction and outer null rows come later
// (the scenario watermark_two_streams_min_policy tests that Spark
// behaviour across a restart).
var restartDependent = []string{
	"stream_stream_inner_join_range_one_side", "left_outer_join_watermark_range_condition",
	// join_s33.json: range-condition joins with a watermark on each input.
	"ss_inner_join_range_two_side_conditions", "ss_right_outer_join_watermark_range_condition",
	"ss_left_outer_join_watermark_range_minutes_1", "ss_left_outer_join_watermark_range_minutes_2",
	"ss_right_outer_join_watermark_range_minutes_1", "ss_right_outer_join_watermark_range_minutes_2",
	"ss_full_outer_join_watermark_range_condition", "ss_left_semi_join_watermark_range_condition",
	"ss_left_outer_join_evict_and_match_same_key_same_epoch",
	// join_s36.json: two chained left outer joins over three watermarked
	// inputs; the null-padded rows come later after a restart.
	"chained_left_outer_joins_three_streams",
}

// mustPass are the scenarios of the acceptance list (besides every
// scenario of memory_sink.json and running_count.json).
var mustPass = []string{
	"replay_uses_recorded_batch_timestamp", "midbatch_failure_rerun", "map_with_recovery",
	"aggregation_append_without_watermark_rejected",
}

func runAll(t *testing.T, restart bool) conformance.Summary {
	t.Helper()
	return runAllWith(t, restart, nil, t.TempDir())
}

// runAllWith runs every scenario with conf set for each (the --conf flag
// of arrowstream conformance), checkpoints under dir.
func runAllWith(t *testing.T, restart bool, conf map[string]string, dir string) conformance.Summary {
	t.Helper()
	scenarios, err := conformance.Load(testdata)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &conformance.Runner{Out: &out, Conf: conf, RestartAfterChecks: restart, StepTimeout: 30 * time.Second, TempDir: dir, CheckOutputTypes: true}
	sum := r.RunAll(scenarios)
	t.Logf("report:\n%s", out.String())
	if last := strings.TrimSpace(out.String()[strings.LastIndex(strings.TrimSpace(out.String()), "\n")+1:]); last != sum.String() {
		t.Errorf("the report does not end with the summary line: %q", last)
	}
	return sum
}

func checkResults(t *testing.T, sum conformance.Summary, restart bool) {
	t.Helper()
	byName := map[string]conformance.Result{}
	for _, res := range sum.Results {
		byName[res.Name] = res
		why, known := knownFailures[res.Name]
		switch {
		case res.Status == conformance.RestartDependent && (!restart || res.WatermarkedInputs < 2 || !strings.HasPrefix(res.Detail, conformance.RestartDependentDetail)):
			t.Errorf("%s classified restart-dependent outside the rule (restart=%v, %d watermarked inputs): %s", res.Name, restart, res.WatermarkedInputs, res.Detail)
		case res.Status == conformance.Failed && !known:
			t.Errorf("FAIL %s: %s", res.Name, res.Detail)
		case res.Status == conformance.Passed && known:
			t.Errorf("%s passes now: remove it from knownFailures (%s)", res.Name, why)
		case res.Status == conformance.Skipped && known:
			t.Errorf("%s is skipped, but listed in knownFailures", res.Name)
		}
	}
	scenarios, _ := conformance.Load(testdata+"/memory_sink.json", testdata+"/running_count.json")
	must := append([]string(nil), mustPass...)
	for _, sc := range scenarios {
		must = append(must, sc.Name)
	}
	for _, name := range must {
		if res, ok := byName[name]; !ok || res.Status != conformance.Passed {
			t.Errorf("acceptance scenario %s: %v %s", name, res.Status, res.Detail)
		}
	}
	if restart {
		for _, name := range restartDependent {
			if res := byName[name]; res.Status != conformance.RestartDependent {
				t.Errorf("%s: %v %s, want it restart-dependent by spec", name, res.Status, res.Detail)
			}
		}
		if sum.RestartDependent != len(restartDependent) || !strings.Contains(sum.String(), fmt.Sprintf("%d %s", sum.RestartDependent, conformance.RestartDependentDetail)) {
			t.Errorf("summary %q: want %d restart-dependent scenarios counted apart", sum, len(restartDependent))
		}
		n := 0
		for _, res := range sum.Results {
			if res.Stateful && res.Status == conformance.Passed {
				n++
			}
		}
		if n < 15 {
			t.Errorf("only %d stateful scenarios ran with restarts", n)
		}
	}
}

func TestConformance(t *testing.T) {
	t.Parallel() // the scenarios mostly wait (Pebble syncs, epochs): the runs overlap
	sum := runAll(t, false)
	checkResults(t, sum, false)
	if sum.Passed < 30 {
		t.Errorf("only %d scenarios passed", sum.Passed)
	}
}

// TestConformanceRestartEquivalence runs every scenario in -restart mode (a
// stop/start of the query after every epoch of a stateful one): the answers
// must not change, except for the scenarios the runner's rule classifies
// as restart-dependent by spec, whose eventual answers it verified.
func TestConformanceRestartEquivalence(t *testing.T) {
	t.Parallel() // the scenarios mostly wait (Pebble syncs, epochs): the runs overlap
	if testing.Short() {
		t.Skip("runs every scenario again")
	}
	checkResults(t, runAll(t, true), true)
}

func TestRunnerReportsFirstDifference(t *testing.T) {
	const file = `[{
	  "name": "wrong_answer", "sources": {"input": [{"name": "value", "type": "int"}]},
	  "query": {"plan": [{"read": "input"}, {"select": ["value + 1 AS v"]}], "sql": "SELECT value + 1 AS v FROM STREAM input", "output_mode": "append"},
	  "steps": [
	    {"action": "start"},
	    {"action": "add", "source": "input", "rows": [[1], [2]]},
	    {"action": "check", "mode": "answer", "rows": [[2], [3]]},
	    {"action": "add", "source": "input", "rows": [[3]]},
	    {"action": "check", "mode": "new_answer", "rows": [[5]]}
	  ]}, {
	  "name": "other", "sources": {}, "sink_columns": [{"name": "t", "type": "timestamp"}],
	  "steps": [{"action": "sink_write", "epoch": 0, "rows": [[1.5], [null]]}, {"action": "sink_assert", "latest_epoch": 0, "all_data": [[null], [1.5]]}]
	}]`
	scenarios, err := conformance.Decode([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &conformance.Runner{Out: &out, TempDir: t.TempDir(), StepTimeout: 10 * time.Second}
	sum := r.RunAll(scenarios)
	want := "FAIL wrong_answer: [plan] step 4 (check): CheckNewAnswer([[5]]): missing [5]; unexpected [4]\nPASS other\n1 passed, 1 failed\n"
	if out.String() != want {
		t.Fatalf("report:\n%s\nwant:\n%s", out.String(), want)
	}
	if sum.Failed != 1 || sum.Passed != 1 {
		t.Fatalf("summary %+v", sum)
	}
	// -run selects by name; -v prints the steps and the dump.
	out.Reset()
	r.Run, r.Verbose = regexp.MustCompile("^wrong"), true
	r.RunAll(scenarios)
	for _, s := range []string{"=== wrong_answer [plan: read → select]", "step 2 CheckAnswer([[2] [3]]): ok", "== offset log", "1 failed"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("verbose report lacks %q:\n%s", s, out.String())
		}
	}
	if strings.Contains(out.String(), "other") {
		t.Errorf("-run did not filter:\n%s", out.String())
	}
}

func TestRunnerSkipsAndFails(t *testing.T) {
	const file = `[{
	  "name": "needs_function", "description": "x\nfunction count_it: counts", "sources": {"input": [{"name": "value", "type": "string"}]},
	  "query": {"plan": [{"read": "input"}, {"map_groups_with_state": {"key": "value", "function": "count_it", "timeout": "none"}}], "output_mode": "update"},
	  "steps": [{"action": "start"}]
	}, {
	  "name": "self_join", "sources": {"a": [{"name": "k", "type": "int"}]},
	  "query": {"sql": "SELECT * FROM STREAM a AS x LEFT ANTI JOIN STREAM a AS y ON x.k = y.k", "output_mode": "append"},
	  "steps": [{"action": "start"}]
	}, {
	  "name": "bad_column", "sources": {"a": [{"name": "k", "type": "int"}]},
	  "query": {"plan": [{"read": "a"}, {"select": ["nope"]}], "output_mode": "append"},
	  "steps": [{"action": "start"}]
	}]`
	scenarios, err := conformance.Decode([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &conformance.Runner{Out: &out, TempDir: t.TempDir(), StepTimeout: 10 * time.Second}
	sum := r.RunAll(scenarios)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "SKIP needs_function: flatMapGroupsWithState") ||
		!strings.HasPrefix(lines[1], "SKIP self_join: stream-stream anti joins") ||
		!strings.HasPrefix(lines[2], "FAIL bad_column: [plan] step 0 (start)") || !strings.Contains(lines[2], "nope") ||
		lines[3] != "0 passed, 1 failed, 2 skipped" {
		t.Fatalf("report:\n%s", out.String())
	}
	if sum.Skipped != 2 {
		t.Fatalf("summary %+v", sum)
	}
}

// TestRunnerChecksOutputTypes: rows compare by number, so avg's double 2.0
// equals a bigint 2; only the comparison of the sink's columns with the
// scenario's `output` tells the two apart.
func TestRunnerChecksOutputTypes(t *testing.T) {
	const tmpl = `[{
	  "name": "avg_type", "sources": {"input": [{"name": "value", "type": "int"}]},
	  "query": {"plan": [{"read": "input"}, {"group_by": [], "agg": ["avg(value) AS a"]}], "output_mode": "complete"},
	  "output": [{"name": "a", "type": "TYPE"}],
	  "steps": [{"action": "start"}, {"action": "add", "source": "input", "rows": [[1], [3]]}, {"action": "check", "mode": "answer", "rows": [[2]]}]
	}]`
	for _, c := range []struct {
		typ   string
		check bool
		want  string
	}{
		{"double", true, "PASS avg_type\n"},
		{"bigint", true, "FAIL avg_type: [plan] step 2 (check): sink column 0 (a) is float64, the scenario's output a is bigint"},
		// FORMAT.md's own contract compares values only.
		{"bigint", false, "PASS avg_type\n"},
	} {
		scenarios, err := conformance.Decode([]byte(strings.Replace(tmpl, "TYPE", c.typ, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		r := &conformance.Runner{Out: &out, TempDir: t.TempDir(), StepTimeout: 10 * time.Second, CheckOutputTypes: c.check}
		r.RunAll(scenarios)
		if !strings.HasPrefix(out.String(), c.want) {
			t.Errorf("output type %s, type check %v: report\n%s\nwant it to start with %q", c.typ, c.check, out.String(), c.want)
		}
	}
}

// TestRunnerRefusedStartMeetsRuntimeFailure: Spark runs a global session
// window until its first batch fails; the engine refuses it at start. A
// scenario written as Spark's test (start, add, runtime failure) passes;
// one that expects output before the failure does not, and neither does a
// scenario whose start is refused with no failure expected.
func TestRunnerRefusedStartMeetsRuntimeFailure(t *testing.T) {
	const tmpl = `[{
	  "name": "refused", "sources": {"input": [{"name": "ts", "type": "timestamp"}]},
	  "query": {"plan": [{"read": "input"}, {"with_watermark": ["ts", "10 seconds"]},
	    {"group_by": ["session_window(ts, '5 seconds') AS session"], "agg": ["count(*) AS count"]}], "output_mode": "append"},
	  "steps": [{"action": "start"}, {"action": "add", "source": "input", "rows": [[10]]}, STEPS]
	}]`
	for _, c := range []struct{ steps, want string }{
		{`{"action": "expect_failure", "phase": "runtime"}`, "PASS refused\n"},
		{`{"action": "process_all_available"}, {"action": "expect_failure", "phase": "runtime"}`, "PASS refused\n"},
		{`{"action": "check", "mode": "answer", "rows": []}, {"action": "expect_failure", "phase": "runtime"}`, "FAIL refused: [plan] step 0 (start)"},
		{`{"action": "check", "mode": "answer", "rows": []}`, "FAIL refused: [plan] step 0 (start)"},
	} {
		scenarios, err := conformance.Decode([]byte(strings.Replace(tmpl, "STEPS", c.steps, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		r := &conformance.Runner{Out: &out, TempDir: t.TempDir(), StepTimeout: 10 * time.Second}
		r.RunAll(scenarios)
		if !strings.HasPrefix(out.String(), c.want) {
			t.Errorf("steps %s: report\n%s\nwant it to start with %q", c.steps, out.String(), c.want)
		}
	}
}
