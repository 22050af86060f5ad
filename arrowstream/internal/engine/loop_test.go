package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// funcExecutor is a stateless executor over one source for loop tests.
type funcExecutor struct {
	fn       func(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error)
	executed []stream.EpochInfo
}

func (f *funcExecutor) Execute(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
	f.executed = append(f.executed, ep)
	if f.fn != nil {
		return f.fn(ctx, ep, in)
	}
	for _, op := range in[1:] {
		op.Close()
	}
	return in[0], nil
}
func (f *funcExecutor) HasState() bool                                      { return false }
func (f *funcExecutor) CommitState(context.Context, stream.EpochInfo) error { return nil }
func (f *funcExecutor) AbortState(stream.EpochInfo)                         {}
func (f *funcExecutor) WatermarkNodes() []string                            { return nil }
func (f *funcExecutor) EventTimeStats() []stateful.EventTimeStats           { return nil }
func (f *funcExecutor) ShouldRunAnotherBatch(int64) bool                    { return false }
func (f *funcExecutor) StateProgress() []stream.StateOperatorProgress       { return nil }
func (f *funcExecutor) Close() error                                        { return nil }

var valueSchema = arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int32, Nullable: true}}, nil)

func startTestQuery(t *testing.T, dir string, src stream.Source, sink stream.Sink, exec Executor, trig Trigger) *Query {
	t.Helper()
	q, err := startQuery(context.Background(), "test", Config{
		CheckpointDir: dir, Sources: []stream.Source{src}, SourceDescriptions: []string{"MemoryStream[value]"},
		Sink: sink, SinkDescription: "collect", Exec: exec, Trigger: trig,
		Conf:   map[string]string{stream.ConfShufflePartitions: "2"},
		Writer: &checkpoint.Writer{NoSync: true}, MinBatchesToRetain: 100, NoDataBatches: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop() })
	return q
}

// startQuery starts a query over cfg (with the system clock unless cfg has
// one), as the session's query manager does.
func startQuery(ctx context.Context, name string, cfg Config) (*Query, error) {
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	q, err := New(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	q.Start(nil)
	return q, nil
}

// systemClock is the wall clock, for tests that do not drive time.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) WaitUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func processingTime(d time.Duration) Trigger {
	return Trigger{Kind: TriggerProcessingTime, Interval: d}
}

func TestMicroBatchExactlyOnceAcrossRestart(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	sink := &collectsink.Sink{}

	q := startTestQuery(t, dir, src, sink, &funcExecutor{}, processingTime(0))
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
	q2 := startTestQuery(t, dir, src, sink, exec, processingTime(0))
	if q2.ID() != id || q2.RunID() == q.RunID() {
		t.Fatalf("ids: %s/%s vs %s/%s", q2.ID(), q2.RunID(), id, q.RunID())
	}
	if err := q2.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	want := []vt.Row{{1}, {2}, {3}, {4}}
	if got := sink.All(); !vt.RowsEqual(want, got) {
		t.Fatalf("sink rows:\n%s", vt.FormatRows(got))
	}
	if len(exec.executed) != 1 || exec.executed[0].ID != 2 {
		t.Fatalf("after restart executed %+v, want only epoch 2", exec.executed)
	}
}

func TestMicroBatchRerunsUncommittedEpochWithRecordedOffsets(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	failing := true
	sink := &collectsink.Sink{Fail: func(epoch int64) error {
		if epoch == 1 && failing {
			return errors.New("sink down")
		}
		return nil
	}}
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(1_000_000))
	q, err := startQuery(ctx, "rerun", Config{
		CheckpointDir: dir, Sources: []stream.Source{src}, SourceDescriptions: []string{"m"}, Sink: sink, SinkDescription: "s",
		Exec: &funcExecutor{}, Trigger: processingTime(0), Clock: clock, Writer: &checkpoint.Writer{NoSync: true}, NoDataBatches: true,
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
	// The offsets of epoch 1 are written, its commit is not.
	offs, coms, err := checkpoint.OpenEpochLogs(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := offs.Get(1); !ok || err != nil {
		t.Fatalf("offsets of epoch 1: %v %v", ok, err)
	}
	if _, ok, err := coms.Get(1); ok || err != nil {
		t.Fatalf("commit of epoch 1 exists: %v %v", ok, err)
	}
	coms.Close()
	// More data arrives before the restart; the re-run must use exactly the
	// recorded offsets and timestamp, so row 3 waits for epoch 2.
	src.AddData([]any{3})
	failing = false
	clock.Advance(time.Hour)
	exec := &funcExecutor{}
	q2, err := startQuery(ctx, "rerun", Config{
		CheckpointDir: dir, Sources: []stream.Source{src}, SourceDescriptions: []string{"m"}, Sink: sink, SinkDescription: "s",
		Exec: exec, Trigger: processingTime(0), Clock: clock, Writer: &checkpoint.Writer{NoSync: true}, NoDataBatches: true,
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
	e1, e2 := sink.Epoch(1), sink.Epoch(2)
	if !vt.RowsEqual([]vt.Row{{2}}, e1) || !vt.RowsEqual([]vt.Row{{3}}, e2) {
		t.Fatalf("epoch 1 %v, epoch 2 %v", e1, e2)
	}
}

func TestMicroBatchTriggers(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	src.AddData([]any{1})
	src.AddData([]any{2})

	// Once: one epoch with everything, then stop.
	sink := &collectsink.Sink{}
	q := startTestQuery(t, t.TempDir(), src, sink, &funcExecutor{}, Trigger{Kind: TriggerOnce})
	if err := q.AwaitTermination(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.All(); len(got) != 2 || len(sink.Order()) != 1 {
		t.Fatalf("Once: %v epochs %v", got, sink.Order())
	}

	// ProcessingTime with a manual Clock: epochs only when the clock moves.
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(0))
	sink2 := &collectsink.Sink{}
	q2, err := startQuery(ctx, "pt", Config{
		CheckpointDir: t.TempDir(), Sources: []stream.Source{src}, SourceDescriptions: []string{"m"}, Sink: sink2, SinkDescription: "s",
		Exec: &funcExecutor{}, Trigger: processingTime(10 * time.Second), Clock: clock, Writer: &checkpoint.Writer{NoSync: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Stop()
	waitFor(t, func() bool { return clock.Waiting() })
	if len(sink2.All()) != 2 {
		t.Fatalf("first trigger at start: %v", sink2.All())
	}
	src.AddData([]any{3})
	time.Sleep(20 * time.Millisecond)
	if len(sink2.All()) != 2 {
		t.Fatalf("ran before the clock moved: %v", sink2.All())
	}
	clock.Advance(10 * time.Second)
	waitFor(t, func() bool { return len(sink2.All()) == 3 })
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
