package conformance_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/streamtest/conformance"
)

// twoWatermarkJoin is a scenario template under the restart rule (two
// watermarked inputs, min policy): an inner join whose left state is
// evicted by the right watermark; %s is the expected answer of the last
// check.
const twoWatermarkJoin = `[{
  "name": "two_watermarks", "sources": {
    "l": [{"name": "k", "type": "int"}, {"name": "t", "type": "int"}],
    "r": [{"name": "k", "type": "int"}, {"name": "t", "type": "int"}]},
  "query": {"sql": "SELECT lk, CAST(lt AS INT) AS lt, CAST(rt AS INT) AS rt FROM (SELECT k AS lk, lt FROM STREAM l WATERMARK timestamp_seconds(t) AS lt DELAY OF INTERVAL 10 SECONDS) AS a JOIN (SELECT k AS rk, rt FROM STREAM r WATERMARK timestamp_seconds(t) AS rt DELAY OF INTERVAL 10 SECONDS) AS b ON lk = rk AND lt BETWEEN rt - INTERVAL 5 SECONDS AND rt", "output_mode": "append"},
  "steps": [
    {"action": "start"},
    {"action": "multi_add", "adds": [{"source": "l", "rows": [[1, 5]]}, {"source": "r", "rows": [[1, 7]]}]},
    {"action": "check", "mode": "answer", "rows": [[1, 5, 7]]},
    {"action": "add", "source": "r", "rows": [[2, 40]]},
    {"action": "check", "mode": "new_answer", "rows": []},
    {"action": "add", "source": "l", "rows": [[2, 40]]},
    {"action": "check", "mode": "new_answer", "rows": %s}
  ]}]`

// TestRestartRuleNeedsACorrectUninterruptedRun: under the restart rule, a
// scenario whose expectation is wrong also without restarts fails in
// -restart mode instead of being classified restart-dependent, and one
// whose answers do not depend on restarts passes.
func TestRestartRuleNeedsACorrectUninterruptedRun(t *testing.T) {
	for _, c := range []struct {
		last, status string
	}{
		{"[[2, 40, 40]]", "PASS"},
		{"[[2, 40, 41]]", "FAIL"},
	} {
		scenarios, err := conformance.Decode([]byte(strings.Replace(twoWatermarkJoin, "%s", c.last, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		r := &conformance.Runner{Out: &out, RestartAfterChecks: true, TempDir: t.TempDir(), StepTimeout: 30 * time.Second}
		sum := r.RunAll(scenarios)
		if !strings.HasPrefix(out.String(), c.status+" two_watermarks") || sum.Results[0].WatermarkedInputs != 2 {
			t.Errorf("last answer %s: want %s, got (%d watermarked inputs):\n%s", c.last, c.status, sum.Results[0].WatermarkedInputs, out.String())
		}
		if c.status == "FAIL" && !strings.Contains(out.String(), "also without restarts") {
			t.Errorf("the failure does not say that the uninterrupted run fails too:\n%s", out.String())
		}
	}
}
