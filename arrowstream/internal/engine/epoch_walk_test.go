package engine

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestEpochWalkAllocations bounds what an empty epoch of a streaming
// plan allocates in the executor, outside the loop: Execute (the plan's
// walk, the stateful operators' empty epochs), the drain of its output,
// the state commit and what the loop then asks of the executor (the
// watermark nodes and their event-time stats). The plan is Nexmark q5's
// shape unshared: three windowed aggregations and a join, two watermark
// nodes, the source read by two scans. On main (a2483876) an epoch
// allocated 60; with the walk's fixed pieces kept (watermark names,
// event-time stats copy, feeds, node children, the stateful nodes'
// inputs, the commit list: branch ep25) 44; with the epoch's chain views
// in one array, the state commit's totals and metrics map kept and the
// join's empty epoch skipping its partitions' run (branch ep27) 30.
func TestEpochWalkAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	e := newTestExec(t, mem, sharedCTEQuery)
	defer e.Close()
	conf := map[string]string{stream.ConfShareStatefulSubplans: "false"}
	dir := t.TempDir()
	tr := newWatermarkTracker(WatermarkMin, 0)
	ctx := context.Background()
	id := int64(0)
	epoch := func(vals ...any) {
		ep := stream.EpochInfo{ID: id, BatchTimestampMs: 1000, WatermarkMs: tr.global, LateWatermarkMs: tr.global,
			HasWatermark: len(e.WatermarkNodes()) > 0, CheckpointDir: dir, NumPartitions: 2, Conf: conf}
		id++
		out, err := e.Execute(ctx, ep, []vector.Operator{int32Input(t, mem, nil, vals...)})
		if err != nil {
			t.Fatalf("epoch %d: %v", ep.ID, err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		vector.ReleaseRecords(recs)
		if err != nil {
			t.Fatalf("epoch %d: %v", ep.ID, err)
		}
		if err := e.CommitState(ctx, ep); err != nil {
			t.Fatalf("epoch %d: %v", ep.ID, err)
		}
		tr.observe(e.WatermarkNodes(), e.EventTimeStats())
	}
	for _, vals := range [][]any{{1, 2, 3, 3, 4}, {5, 6, 6, 6, 2}, {}, {}} {
		epoch(vals...)
	}
	allocs := testing.AllocsPerRun(100, func() { epoch() })
	t.Logf("%.1f allocations per empty epoch", allocs)
	if allocs > maxEpochWalkAllocs {
		t.Errorf("an empty epoch of q5's shape allocates %.1f times in the executor, want at most %d", allocs, maxEpochWalkAllocs)
	}
}

// maxEpochWalkAllocs is TestEpochWalkAllocations' bound: between this
// branch's figure and main's (44 at 4b019711), with room for the
// collector's own.
const maxEpochWalkAllocs = 36
