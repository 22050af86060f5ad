package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStatefulEpochOneDurableWrite: an epoch of a stateful query that
// changes its state, into a sink idempotent by epoch id, makes one durable
// append, to the epoch log, carrying
// its offsets record, its state record and the previous epoch's commit
// record; nothing is written to a separate state log. A restart in the
// process (the same executor, a new epoch log) and a new start both read
// the state back.
func TestStatefulEpochOneDurableWrite(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	sink := &collectsink.Sink{}
	var mu sync.Mutex
	appends := map[string]int{} // per directory kind
	w := &checkpoint.Writer{NoSync: true, Hook: func(step checkpoint.WriteStep, path string) error {
		if step != checkpoint.AfterTempWrite || backgroundSnapshot(path) {
			return nil // background snapshots are not the epoch's writes
		}
		rel, _ := filepath.Rel(dir, path)
		mu.Lock()
		appends[strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]]++
		mu.Unlock()
		return nil
	}}
	start := func(exec Executor) *Query {
		q, err := New(ctx, "test", Config{
			CheckpointDir: dir, Sources: []stream.Source{src}, SourceDescriptions: []string{"MemoryStream[value]"},
			Sink: idemSink{sink}, SinkDescription: "collect", Exec: exec, Trigger: processingTime(0),
			Conf:   map[string]string{stream.ConfShufflePartitions: "4"},
			Writer: w, MinBatchesToRetain: 100, Clock: systemClock{},
		})
		if err != nil {
			t.Fatal(err)
		}
		// The loop idles between the steps: its flush of the last commit
		// record would be a second append (idleFlushDelay), whatever the
		// machine's speed; the records ride with the next epoch instead.
		q.mb.idleFlush.base = time.Hour
		q.Start(nil)
		t.Cleanup(func() { q.Stop() })
		return q
	}
	counts := map[int]int64{}
	step := func(q *Query, v int) {
		t.Helper()
		counts[v]++
		want := counts[v]
		if _, err := src.AddData([]any{v}); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sink.Last(); !vt.RowsEqual([]vt.Row{{v, want}}, got) {
			t.Fatalf("last batch:\n%s want %d, %d", vt.FormatRows(got), v, want)
		}
	}
	exec := newCountExecutor(t, mem, stream.Update)
	exec.life.writer = w
	q := start(exec)
	step(q, 1) // the first epoch also writes the state schema
	mu.Lock()
	clear(appends)
	mu.Unlock()
	const epochs = 20
	for i := 0; i < epochs; i++ {
		step(q, i%3)
	}
	mu.Lock()
	got := maps(appends)
	mu.Unlock()
	if got[checkpoint.EpochLogDir] != epochs || len(got) != 1 {
		t.Errorf("%d epochs that changed state made these appends per directory: %v; want %d to %s and nothing else", epochs, got, epochs, checkpoint.EpochLogDir)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", checkpoint.StateLogDir)); !os.IsNotExist(err) {
		t.Errorf("a new checkpoint has a separate state log (%v)", err)
	}
	q.Stop()
	// A new start reads the state from the epoch log.
	q = start(newCountExecutor(t, mem, stream.Update))
	step(q, 1)
	q.Stop()
}

// idemSink declares the collecting sink idempotent by epoch id (no epoch
// runs twice in the test): its commit records ride with the next epoch's
// write, as the memory sink's do.
type idemSink struct{ *collectsink.Sink }

func (idemSink) EpochIdempotent() bool { return true }

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// durableSrc asks for the epoch's offsets durable before it is read.
type durableSrc struct{ stream.Source }

func (durableSrc) DurablePlan() bool { return true }

// TestDurablePlanSourceKeepsTwoWrites: with a source that needs its plan
// durable before it is read, a stateful epoch writes its offsets record
// on its own (before the read) and its state record after: two appends.
func TestDurablePlanSourceKeepsTwoWrites(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	q, appends := countingStatefulQuery(ctx, t, mem, durableSrc{src})
	q.mb.idleFlush.base = time.Hour
	q.Start(nil)
	defer q.Stop()
	const epochs = 5
	for i := 0; i < epochs; i++ {
		if _, err := src.AddData([]any{i}); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := appends(); got != 2*epochs {
		t.Errorf("%d stateful epochs over a DurablePlanSource made %d epoch log appends, want %d", epochs, got, 2*epochs)
	}
}

// countingStatefulQuery makes a stateful count query over src into an
// epoch-idempotent sink, on 2 shuffle partitions with a checkpoint in a
// temporary directory, and returns it with a function that tells how many
// appends its epoch log has had so far.
func countingStatefulQuery(ctx context.Context, t *testing.T, mem memory.Allocator, src stream.Source) (*Query, func() int) {
	t.Helper()
	var mu sync.Mutex
	appends := 0
	w := &checkpoint.Writer{NoSync: true, Hook: func(step checkpoint.WriteStep, path string) error {
		if step == checkpoint.AfterTempWrite && strings.Contains(path, checkpoint.EpochLogDir) {
			mu.Lock()
			appends++
			mu.Unlock()
		}
		return nil
	}}
	exec := newCountExecutor(t, mem, stream.Update)
	exec.life.writer = w
	q, err := New(ctx, "test", Config{
		CheckpointDir: t.TempDir(), Sources: []stream.Source{src}, SourceDescriptions: []string{"MemoryStream[value]"},
		Sink: idemSink{&collectsink.Sink{}}, SinkDescription: "collect", Exec: exec, Trigger: processingTime(0),
		Conf:   map[string]string{stream.ConfShufflePartitions: "2"},
		Writer: w, MinBatchesToRetain: 100, Clock: systemClock{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return q, func() int {
		mu.Lock()
		defer mu.Unlock()
		return appends
	}
}

// backgroundSnapshot reports whether path is a state snapshot the store's
// maintenance writes in the background (a partition's own file or an
// operator's pack), not one of the epoch's writes.
func backgroundSnapshot(path string) bool {
	return strings.HasSuffix(path, ".snapshot") || strings.HasSuffix(path, ".pack")
}
