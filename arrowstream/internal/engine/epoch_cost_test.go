package engine

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// What an epoch costs whatever its rows (issue 19, branch epochfix): the
// tests below bound the fixed work of the micro-batch loop.

// firstInputExec runs a count executor over the first input and closes
// the others: a stateful query over several sources, as a join's.
type firstInputExec struct{ *aggExecutor }

func (e firstInputExec) Execute(ctx context.Context, ep stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
	for _, op := range in[1:] {
		op.Close()
	}
	return e.aggExecutor.Execute(ctx, ep, in[:1])
}

// epochCostQuery starts a stateful count query over nsrc memory streams
// (the first one counted) into an epoch-idempotent sink, with fsync when
// durable, and returns it with its sources and the number of durable writes
// made so far (the checkpoint's write hook: every write of a checkpoint
// file, each followed by its fsync or fdatasync when sync, passes
// AfterTempWrite).
func epochCostQuery(t *testing.T, mem memory.Allocator, nsrc int, durable bool) (*Query, []*memsource.Stream, func() int) {
	t.Helper()
	var mu sync.Mutex
	appends := 0
	w := &checkpoint.Writer{NoSync: !durable, Hook: func(step checkpoint.WriteStep, path string) error {
		// Background snapshots are the state store's maintenance, not the
		// epoch's writes (as in TestStatefulEpochOneDurableWrite).
		if step == checkpoint.AfterTempWrite && !backgroundSnapshot(path) {
			mu.Lock()
			appends++
			mu.Unlock()
		}
		return nil
	}}
	srcs := make([]*memsource.Stream, nsrc)
	sources := make([]stream.Source, nsrc)
	descs := make([]string, nsrc)
	for i := range srcs {
		srcs[i] = memsource.New(mem, valueSchema)
		sources[i], descs[i] = srcs[i], "MemoryStream[value]"
		t.Cleanup(func() { srcs[i].Close() })
	}
	exec := newCountExecutor(t, mem, stream.Update)
	exec.life.writer = w
	q, err := New(context.Background(), "test", Config{
		CheckpointDir: t.TempDir(), Sources: sources, SourceDescriptions: descs,
		Sink: discardSink{}, SinkDescription: "discard", Exec: firstInputExec{exec}, Trigger: processingTime(0),
		Conf:   map[string]string{stream.ConfShufflePartitions: "2"},
		Writer: w, MinBatchesToRetain: 100, Clock: systemClock{},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The idle loop's flush of the last commit record would be a second
	// append per epoch whenever the machine is slow (idleFlushDelay).
	q.mb.idleFlush.base = time.Hour
	q.Start(nil)
	t.Cleanup(func() { q.Stop() })
	return q, srcs, func() int {
		mu.Lock()
		defer mu.Unlock()
		return appends
	}
}

// discardSink drains each epoch's output and keeps nothing; it is
// idempotent by epoch id, so that commit records ride with the next
// epoch's write (as the memory sink's).
type discardSink struct{}

func (discardSink) EpochIdempotent() bool { return true }

func (discardSink) AddBatch(ctx context.Context, _ int64, op vector.Operator) error {
	defer op.Close()
	recs, err := vector.Drain(ctx, op)
	vector.ReleaseRecords(recs)
	return err
}

// emptyEpoch adds a record of no rows to the first source and waits for
// the epoch it makes (and the idle trigger after it) to be processed. One
// source only: the query wakes at the first one's data, so records added
// to several one after the other may make one epoch or two.
func emptyEpoch(t testing.TB, q *Query, srcs []*memsource.Stream, empty arrow.Record) {
	if _, err := srcs[0].AddRecord(empty); err != nil {
		t.Fatal(err)
	}
	if err := q.ProcessAllAvailable(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func emptyRecord(mem memory.Allocator) arrow.Record {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	col := b.NewArray()
	defer col.Release()
	return array.NewRecord(valueSchema, []arrow.Array{col}, 0)
}

// TestEmptyEpochAllocations bounds the allocations of an epoch with no
// rows of a stateful query over three sources, everything the process
// allocates for it counted (the caller's records, the query loop, its
// idle trigger, the state and log commits, the sink). Main before branch
// epochfix: 100 per epoch; after it 45 (no closure per phase of the
// trigger, the idle trigger's report built only when published, the idle
// wait without watching goroutines and with one timer, the inputs' slices
// kept, a report's rates in one array, the memory stream's offsets
// formatted once, runEachPartition's and the state account's, the commit
// entry without json.Marshal, the epoch log's record lists kept). The
// bound leaves room for the collector's own and for
// small changes elsewhere.
func TestEmptyEpochAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	mem := memory.NewGoAllocator()
	q, srcs, appends := epochCostQuery(t, mem, 3, false)
	empty := emptyRecord(mem)
	defer empty.Release()
	for range 5 { // the first epochs open the state and the logs
		emptyEpoch(t, q, srcs, empty)
	}
	before := appends()
	const runs = 200
	allocs := testing.AllocsPerRun(runs, func() { emptyEpoch(t, q, srcs, empty) })
	epochs := appends() - before
	// AllocsPerRun runs the function once more to warm up.
	if epochs != runs+1 {
		t.Fatalf("%d empty epochs made %d durable appends, want one each", runs+1, epochs)
	}
	t.Logf("%.0f allocations per empty epoch", allocs)
	if allocs > maxEmptyEpochAllocs {
		t.Errorf("an empty epoch of a stateful query over 3 sources allocates %.0f times, want at most %d", allocs, maxEmptyEpochAllocs)
	}
}

// maxEmptyEpochAllocs is TestEmptyEpochAllocations' bound.
const maxEmptyEpochAllocs = 70

// TestEmptyEpochOneDurableWrite: with fsync on, an empty epoch of a
// stateful query over three sources (and the idle trigger after it) makes
// one durable write: the epoch log's append carrying its offsets, state
// and the previous epoch's commit record, then one fdatasync.
func TestEmptyEpochOneDurableWrite(t *testing.T) {
	mem := memory.NewGoAllocator()
	q, srcs, writes := epochCostQuery(t, mem, 3, true)
	empty := emptyRecord(mem)
	defer empty.Release()
	for range 3 {
		emptyEpoch(t, q, srcs, empty)
	}
	before := writes()
	const epochs = 30
	for range epochs {
		emptyEpoch(t, q, srcs, empty)
	}
	if got := writes() - before; got != epochs {
		t.Errorf("%d empty epochs with fsync made %d durable writes, want %d", epochs, got, epochs)
	}
}

// TestIdleWaitWatchesSourcesWithoutGoroutines: an idle query over a few
// notifying sources waits on their channels in its own select; it used
// to start a goroutine per source for every idle wait (anyClosed), three
// starts and wake-ups per idle trigger of a query over three streams.
func TestIdleWaitWatchesSourcesWithoutGoroutines(t *testing.T) {
	mem := poisonmem.New()
	// Cleanups run last first: this one after the query stops and its
	// sources close.
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	q, srcs, _ := epochCostQuery(t, mem, 3, false)
	empty := emptyRecord(mem)
	defer empty.Release()
	emptyEpoch(t, q, srcs, empty)
	var buf bytes.Buffer
	for range 20 {
		buf.Reset()
		if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), "engine.anyClosed") {
			t.Fatalf("an idle query over %d sources runs goroutines watching them:\n%s", len(srcs), buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Data still wakes the idle query at once (the test's deadline is the
	// only bound: the idle poll of memory streams is long).
	if _, err := srcs[2].AddData([]any{7}); err != nil {
		t.Fatal(err)
	}
	if err := q.ProcessAllAvailable(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestWaitWake: waitWake returns when the timer fires, when any one of
// its channels is closed (also past the ones it selects on directly) and
// with ctx's error when ctx ends.
func TestWaitWake(t *testing.T) {
	never := make(chan time.Time)
	for _, n := range []int{1, 3, directWake, directWake + 2} {
		for fire := range n {
			chs := make([]chan struct{}, n)
			ro := make([]<-chan struct{}, n)
			for i := range chs {
				chs[i] = make(chan struct{})
				ro[i] = chs[i]
			}
			close(chs[fire])
			if err := waitWake(context.Background(), never, ro); err != nil {
				t.Fatalf("%d channels, #%d closed: %v", n, fire, err)
			}
		}
	}
	fired := make(chan time.Time, 1)
	fired <- time.Time{}
	if err := waitWake(context.Background(), fired, []<-chan struct{}{make(chan struct{})}); err != nil {
		t.Fatalf("timer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waitWake(ctx, never, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

// TestEmptyEpochBytes bounds the bytes the process allocates per empty
// epoch of TestEmptyEpochAllocations' query. The bytes matter beyond
// their count: the runs of the benchmark harness start on a heap handed
// back to the OS and run no collection, so each byte of an epoch is on a
// fresh page that faults in (a third of an empty epoch's CPU). Main
// 4b019711: 3340 bytes per epoch; branch ep27 (the trigger's phase
// durations in an array, their map built only for a published report;
// the state commit's totals and metrics map kept): 3080. Main b3a574ac:
// 3088; branch a28c (the offsets list and the state log's index scratch
// kept between epochs, a record's path list sized once): 2891–2898.
func TestEmptyEpochBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	mem := memory.NewGoAllocator()
	q, srcs, _ := epochCostQuery(t, mem, 3, false)
	empty := emptyRecord(mem)
	defer empty.Release()
	for range 5 { // the first epochs open the state and the logs
		emptyEpoch(t, q, srcs, empty)
	}
	const runs = 400
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		emptyEpoch(t, q, srcs, empty)
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / runs
	t.Logf("%.0f bytes allocated per empty epoch", per)
	if per > maxEmptyEpochBytes {
		t.Errorf("an empty epoch of a stateful query over 3 sources allocates %.0f bytes, want at most %d", per, maxEmptyEpochBytes)
	}
}

// maxEmptyEpochBytes is TestEmptyEpochBytes' bound.
const maxEmptyEpochBytes = 3000
