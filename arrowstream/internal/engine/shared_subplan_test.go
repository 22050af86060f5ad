package engine

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// countingOp counts the epochs a stateful operator runs.
type countingOp struct {
	stateful.Op
	runs int
}

func (c *countingOp) Execute(ctx context.Context, ep stateful.Epoch, in vector.Operator) (vector.Operator, error) {
	c.runs++
	return c.Op.Execute(ctx, ep, in)
}

func (c *countingOp) ExecuteTwo(ctx context.Context, ep stateful.Epoch, l, r vector.Operator) (vector.Operator, error) {
	c.runs++
	return c.Op.(stateful.TwoInputOp).ExecuteTwo(ctx, ep, l, r)
}

func (c *countingOp) ChildNodes(kids []plan.Node, conf map[string]string) []plan.Node {
	if ic, ok := c.Op.(stateful.InputChooser); ok {
		return ic.ChildNodes(kids, conf)
	}
	return kids
}

func (c *countingOp) Close() error {
	if cl, ok := c.Op.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// sharedCTEQuery reads the stateful CTE c twice (Nexmark q5's shape): the
// per-window maximum of c joined back to c.
const sharedCTEQuery = `WITH c AS (
  SELECT value % 3 AS k, window, count(*) AS n
  FROM STREAM s WATERMARK timestamp_seconds(value) AS ts DELAY OF INTERVAL 1 SECONDS
  GROUP BY value % 3, window(ts, '4 seconds', '2 seconds'))
SELECT c.k, c.n, CAST(c.window.start AS BIGINT) AS ws
FROM c JOIN (SELECT window AS w, max(n) AS mx FROM c GROUP BY window) m
  ON c.window = m.w AND c.n >= m.mx`

// TestSharedSubplanRunsOnce runs a plan that reads one stateful subplan
// twice with sharing on and off: on, the copy's aggregation is dropped
// (three operators, no state under its number, one watermark node, the
// source read by one scan) and every operator runs exactly once per
// epoch; off, all four run once per epoch. The answers are the same and
// the shared operator's progress names its two readers.
func TestSharedSubplanRunsOnce(t *testing.T) {
	epochs := [][]any{{1, 2, 3, 3, 4}, {}, {5, 6, 6, 6, 2}, {9, 10, 11}, {}, {20}, {}}
	answers := map[bool][][]vt.Row{}
	for _, share := range []bool{true, false} {
		mem := poisonmem.New()
		e := newTestExec(t, mem, sharedCTEQuery)
		counts := make([]*countingOp, len(e.order))
		for i, op := range e.order {
			counts[i] = &countingOp{Op: op}
			e.order[i] = counts[i]
		}
		conf := map[string]string{stream.ConfShareStatefulSubplans: "false"}
		if share {
			conf[stream.ConfShareStatefulSubplans] = "true"
		}
		dir := t.TempDir()
		tr := newWatermarkTracker(WatermarkMin, 0)
		late := int64(0)
		for id, vals := range epochs {
			ep := stream.EpochInfo{ID: int64(id), BatchTimestampMs: 1000, WatermarkMs: tr.global, LateWatermarkMs: late,
				HasWatermark: true, CheckpointDir: dir, NumPartitions: 2, Conf: conf}
			late = tr.global
			out, err := e.Execute(context.Background(), ep, []vector.Operator{int32Input(t, mem, nil, vals...)})
			if err != nil {
				t.Fatalf("share %v epoch %d: %v", share, id, err)
			}
			recs, err := vector.Drain(context.Background(), out)
			out.Close()
			if err != nil {
				t.Fatalf("share %v epoch %d: %v", share, id, err)
			}
			answers[share] = append(answers[share], vt.SortRows(vt.RowsOf(recs...)))
			vector.ReleaseRecords(recs)
			if err := e.CommitState(context.Background(), ep); err != nil {
				t.Fatal(err)
			}
			tr.observe(e.WatermarkNodes(), e.EventTimeStats())
		}
		wantOps, wantWm, wantUses := 4, 2, []int{2}
		if share {
			wantOps, wantWm, wantUses = 3, 1, []int{1}
		}
		if len(e.order) != wantOps || len(e.WatermarkNodes()) != wantWm || !slices.Equal(e.srcUses, wantUses) {
			t.Fatalf("share %v: %d operators, watermark nodes %v, scans per source %v; want %d, %d, %v",
				share, len(e.order), e.WatermarkNodes(), e.srcUses, wantOps, wantWm, wantUses)
		}
		for i, c := range counts {
			want := len(epochs)
			if share && i == 3 {
				want = 0 // the copy
			}
			if c.runs != want {
				t.Errorf("share %v: operator %d ran %d times in %d epochs, want %d", share, i, c.runs, len(epochs), want)
			}
		}
		readers := 0
		for _, p := range e.StateProgress() {
			if n := p.CustomMetrics[SharedReadersMetric]; n > 0 {
				readers += int(n)
			}
		}
		if want := map[bool]int{true: 2, false: 0}[share]; readers != want {
			t.Errorf("share %v: progress names %d shared readers, want %d: %+v", share, readers, want, e.StateProgress())
		}
		_, err := os.Stat(filepath.Join(dir, "state", "3"))
		if share != os.IsNotExist(err) {
			t.Errorf("share %v: state of the copy (operator 3): %v", share, err)
		}
		e.Close()
		mem.AssertSize(t, 0)
	}
	if len(slices.Concat(answers[true]...)) == 0 {
		t.Fatal("the query answered nothing: the comparison checks nothing")
	}
	for i := range epochs {
		if !vt.RowsEqual(answers[true][i], answers[false][i]) {
			t.Fatalf("epoch %d: shared\n%sunshared\n%s", i, vt.FormatRows(answers[true][i]), vt.FormatRows(answers[false][i]))
		}
	}
}

// TestSubplanSharingFrozen: a new query records sharing on (unless its
// settings turn it off); a restarted one keeps what its checkpoint
// recorded, and a checkpoint that records nothing (written before the
// setting) keeps every copy.
func TestSubplanSharingFrozen(t *testing.T) {
	k := stream.ConfShareStatefulSubplans
	for _, tc := range []struct {
		session, recorded string
		restarted         bool
		want              string
	}{
		{"", "", false, "true"},
		{"false", "", false, "false"},
		{"true", "", false, "true"},
		{"", "", true, "false"},
		{"true", "", true, "false"},
		{"false", "true", true, "true"},
		{"", "false", true, "false"},
	} {
		conf := map[string]string{}
		if tc.session != "" {
			conf[k] = tc.session
		}
		recorded := map[string]string{}
		if tc.recorded != "" {
			recorded[k] = tc.recorded
			conf[k] = tc.recorded // the recorded settings win (microBatch.start)
		}
		setSubplanSharing(conf, recorded, tc.restarted)
		if conf[k] != tc.want {
			t.Errorf("%+v: %q", tc, conf[k])
		}
	}
}
