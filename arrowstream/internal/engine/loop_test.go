package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// funcExecutor is a stateless executor over one source for loop tests.
type funcExecutor struct {
	fn       func(ctx context.Context, ep EpochInfo, in []vector.Operator) (vector.Operator, error)
	executed []EpochInfo
}

func (f *funcExecutor) Execute(ctx context.Context, ep EpochInfo, in []vector.Operator) (vector.Operator, error) {
	f.executed = append(f.executed, ep)
	if f.fn != nil {
		return f.fn(ctx, ep, in)
	}
	for _, op := range in[1:] {
		op.Close()
	}
	return in[0], nil
}
func (f *funcExecutor) CommitState(context.Context, EpochInfo) error { return nil }
func (f *funcExecutor) AbortState(EpochInfo)                         {}
func (f *funcExecutor) WatermarkNodes() []string                     { return nil }
func (f *funcExecutor) EventTimeStats() []EventTimeStats             { return nil }
func (f *funcExecutor) ShouldRunAnotherBatch(int64) bool             { return false }
func (f *funcExecutor) StateProgress() []StateOperatorProgress       { return nil }
func (f *funcExecutor) Close() error                                 { return nil }

// collectSink keeps each epoch's rows and ignores replays of committed
// epochs, as the memory sink does.
type collectSink struct {
	mu     sync.Mutex
	epochs map[int64][]vt.Row
	order  []int64
	fail   func(epoch int64) error
}

func (s *collectSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	recs, err := vector.Drain(ctx, data)
	if err != nil {
		return err
	}
	rows := vt.RowsOf(recs...)
	for _, r := range recs {
		r.Release()
	}
	if s.fail != nil {
		if err := s.fail(epoch); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epochs == nil {
		s.epochs = map[int64][]vt.Row{}
	}
	if len(s.order) > 0 && epoch <= s.order[len(s.order)-1] {
		return nil
	}
	s.epochs[epoch] = rows
	s.order = append(s.order, epoch)
	return nil
}

func (s *collectSink) all() []vt.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []vt.Row
	for _, e := range s.order {
		out = append(out, s.epochs[e]...)
	}
	return out
}

var valueSchema = arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int32, Nullable: true}}, nil)

func startTestQuery(t *testing.T, m *QueryManager, dir string, src Source, sink Sink, exec Executor, trig Trigger) *StreamingQuery {
	t.Helper()
	q, err := m.start(context.Background(), "test", loopConfig{
		checkpointDir: dir, sources: []Source{src}, sourceDescriptions: []string{"MemoryStream[value]"},
		sink: sink, sinkDescription: "collect", exec: exec, trigger: trig,
		conf:   map[string]string{ConfShufflePartitions: "2"},
		writer: &checkpoint.Writer{NoSync: true}, minBatchesToRetain: 100, noDataBatches: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop() })
	return q
}

func TestMicroBatchExactlyOnceAcrossRestart(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	sink := &collectSink{}
	m := NewQueryManager(nil)

	q := startTestQuery(t, m, dir, src, sink, &funcExecutor{}, ProcessingTime(0))
	src.AddData([]any{1}, []any{2})
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	src.AddData([]any{3})
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	p := q.LastProgress()
	if p == nil || p.BatchID != 1 || p.NumInputRows != 1 || p.Sink.NumOutputRows != 1 {
		t.Fatalf("last progress: %s", p.JSON())
	}
	id := q.ID()
	q.Stop()

	// Restart: the id is stable, nothing is re-emitted, new data continues.
	src.AddData([]any{4})
	exec := &funcExecutor{}
	q2 := startTestQuery(t, m, dir, src, sink, exec, ProcessingTime(0))
	if q2.ID() != id || q2.RunID() == q.RunID() {
		t.Fatalf("ids: %s/%s vs %s/%s", q2.ID(), q2.RunID(), id, q.RunID())
	}
	if err := q2.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	want := []vt.Row{{1}, {2}, {3}, {4}}
	if got := sink.all(); !vt.RowsEqual(want, got) {
		t.Fatalf("sink rows:\n%s", vt.FormatRows(got))
	}
	if len(exec.executed) != 1 || exec.executed[0].ID != 2 {
		t.Fatalf("after restart executed %+v, want only epoch 2", exec.executed)
	}
}

func TestMicroBatchRerunsUncommittedEpochWithRecordedOffsets(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	failing := true
	sink := &collectSink{fail: func(epoch int64) error {
		if epoch == 1 && failing {
			return errors.New("sink down")
		}
		return nil
	}}
	m := NewQueryManager(nil)
	clock := NewManualClock(time.UnixMilli(1_000_000))
	q, err := m.start(ctx, "rerun", loopConfig{
		checkpointDir: dir, sources: []Source{src}, sourceDescriptions: []string{"m"}, sink: sink, sinkDescription: "s",
		exec: &funcExecutor{}, trigger: ProcessingTime(0), clock: clock, writer: &checkpoint.Writer{NoSync: true}, noDataBatches: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	src.AddData([]any{1})
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	src.AddData([]any{2})
	err = q.ProcessAllAvailable(ctx)
	if err == nil || !strings.Contains(err.Error(), "sink down") || !strings.Contains(err.Error(), "epoch 1") {
		t.Fatalf("want sink failure for epoch 1, got %v", err)
	}
	// offsets/1 is written, commits/1 is not.
	if _, err := os.Stat(filepath.Join(dir, "offsets", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "commits", "1")); !os.IsNotExist(err) {
		t.Fatalf("commits/1 exists: %v", err)
	}
	// More data arrives before the restart; the re-run must use exactly the
	// recorded offsets and timestamp, so row 3 waits for epoch 2.
	src.AddData([]any{3})
	failing = false
	clock.Advance(time.Hour)
	exec := &funcExecutor{}
	q2, err := m.start(ctx, "rerun", loopConfig{
		checkpointDir: dir, sources: []Source{src}, sourceDescriptions: []string{"m"}, sink: sink, sinkDescription: "s",
		exec: exec, trigger: ProcessingTime(0), clock: clock, writer: &checkpoint.Writer{NoSync: true}, noDataBatches: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Stop()
	if err := q2.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if len(exec.executed) != 2 || exec.executed[0].ID != 1 || exec.executed[1].ID != 2 {
		t.Fatalf("executed %+v", exec.executed)
	}
	if exec.executed[0].BatchTimestampMs != 1_000_000 {
		t.Errorf("re-run epoch used timestamp %d, want the recorded 1000000", exec.executed[0].BatchTimestampMs)
	}
	sink.mu.Lock()
	e1, e2 := sink.epochs[1], sink.epochs[2]
	sink.mu.Unlock()
	if !vt.RowsEqual([]vt.Row{{2}}, e1) || !vt.RowsEqual([]vt.Row{{3}}, e2) {
		t.Fatalf("epoch 1 %v, epoch 2 %v", e1, e2)
	}
}

func TestMicroBatchTriggers(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	src.AddData([]any{1})
	src.AddData([]any{2})
	m := NewQueryManager(nil)

	// Once: one epoch with everything, then stop.
	sink := &collectSink{}
	q := startTestQuery(t, m, t.TempDir(), src, sink, &funcExecutor{}, Once())
	if err := q.AwaitTermination(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.all(); len(got) != 2 || len(sink.order) != 1 {
		t.Fatalf("Once: %v epochs %v", got, sink.order)
	}

	// ProcessingTime with a manual clock: epochs only when the clock moves.
	clock := NewManualClock(time.UnixMilli(0))
	sink2 := &collectSink{}
	q2, err := m.start(ctx, "pt", loopConfig{
		checkpointDir: t.TempDir(), sources: []Source{src}, sourceDescriptions: []string{"m"}, sink: sink2, sinkDescription: "s",
		exec: &funcExecutor{}, trigger: ProcessingTime(10 * time.Second), clock: clock, writer: &checkpoint.Writer{NoSync: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Stop()
	waitFor(t, func() bool { return clock.Waiting() })
	if len(sink2.all()) != 2 {
		t.Fatalf("first trigger at start: %v", sink2.all())
	}
	src.AddData([]any{3})
	time.Sleep(20 * time.Millisecond)
	if len(sink2.all()) != 2 {
		t.Fatalf("ran before the clock moved: %v", sink2.all())
	}
	clock.Advance(10 * time.Second)
	waitFor(t, func() bool { return len(sink2.all()) == 3 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
