package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/checkpoint/pebblestore"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// errInjected is the error the fault provider injects.
var errInjected = errors.New("injected state error")

// faultProvider wraps a provider: while failGets is set, every store's
// reads (Get, Scan, Range) fail (a disk read error), and while failCommits is set every
// Commit fails (after aborting the inner store); the inner store is
// otherwise untouched, so the store's own lifecycle (commit, abort,
// reload) is the provider's.
type faultProvider struct {
	checkpoint.StateStoreProvider
	failGets, failCommits *atomic.Bool
}

func (f faultProvider) OpenPartition(dir string) (checkpoint.StatePartition, error) {
	p, err := f.StateStoreProvider.OpenPartition(dir)
	if err != nil {
		return nil, err
	}
	return faultPartition{p, f.failGets, f.failCommits}, nil
}

type faultPartition struct {
	checkpoint.StatePartition
	failGets, failCommits *atomic.Bool
}

func (f faultPartition) Begin(version int64) (checkpoint.StateStore, error) {
	st, err := f.StatePartition.Begin(version)
	if err != nil {
		return nil, err
	}
	return faultStore{st, f.failGets, f.failCommits}, nil
}

type faultStore struct {
	checkpoint.StateStore
	failGets, failCommits *atomic.Bool
}

func (f faultStore) Commit(ctx context.Context) (int64, error) {
	if f.failCommits.Load() {
		f.StateStore.Abort()
		return 0, fmt.Errorf("commit version %d: %w", f.Version()+1, errInjected)
	}
	return f.StateStore.Commit(ctx)
}

func (f faultStore) Get(key []byte) ([]byte, bool, error) {
	if f.failGets.Load() {
		return nil, false, fmt.Errorf("get %x: %w", key, errInjected)
	}
	return f.StateStore.Get(key)
}

func (f faultStore) Scan(fn func(key, value []byte) bool) error {
	if f.failGets.Load() {
		return fmt.Errorf("scan: %w", errInjected)
	}
	return f.StateStore.Scan(fn)
}

func (f faultStore) Range(fn func(key, value []byte) bool) error {
	if f.failGets.Load() {
		return fmt.Errorf("range: %w", errInjected)
	}
	return f.StateStore.Range(fn)
}

// stateProviders are the providers the fault tests run on.
func stateProviders(t *testing.T) map[string]func(w *checkpoint.Writer) checkpoint.StateStoreProvider {
	return map[string]func(w *checkpoint.Writer) checkpoint.StateStoreProvider{
		"memory": func(w *checkpoint.Writer) checkpoint.StateStoreProvider {
			return checkpoint.NewMemoryProvider(w, checkpoint.StoreOptions{})
		},
		"pebble": func(w *checkpoint.Writer) checkpoint.StateStoreProvider {
			p, err := pebblestore.NewProvider(pebblestore.Options{Writer: w, BlockCacheBytes: 1 << 20, MemtableBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	}
}

func newFaultCountExecutor(t *testing.T, mem *poisonmem.Allocator, prov checkpoint.StateStoreProvider) *aggExecutor {
	t.Helper()
	agg, err := stateful.NewAggregate(mem, 0, valueSchema, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("value"), "value")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "count(1)"}},
	}, stream.Update, -1)
	if err != nil {
		t.Fatal(err)
	}
	return newAggExecutor(mem, agg, &checkpoint.Writer{NoSync: true}, prov)
}

// TestStateReadErrorNeverReachesSink: a state read that fails in epoch 1
// fails the epoch before the sink sees it (the operator would otherwise
// read "absent" and emit a count of 1), and a restart re-runs the epoch
// from the state version it started from and gives the right count. The
// aggregation reads its stores only to rebuild its live state, so the
// read fails in the first epoch after a restart.
func TestStateReadErrorNeverReachesSink(t *testing.T) {
	for name, open := range stateProviders(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			src := memsource.New(mem, valueSchema)
			defer src.Close()
			sink := &collectsink.Sink{}
			var fail, never atomic.Bool
			w := &checkpoint.Writer{NoSync: true}
			start := func() *Query {
				prov := faultProvider{open(w), &fail, &never}
				return startTestQuery(t, dir, src, sink, newFaultCountExecutor(t, mem, prov), processingTime(0))
			}
			q := start()
			src.AddData([]any{7}, []any{8})
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			q.Stop()
			fail.Store(true)
			src.AddData([]any{7})
			q = start()
			err := q.AwaitTermination(ctx)
			if !errors.Is(err, errInjected) {
				t.Fatalf("the query should fail with the injected read error, got %v", err)
			}
			if got := sink.Order(); len(got) != 1 || got[0] != 0 {
				t.Fatalf("the sink holds epochs %v; only epoch 0 succeeded", got)
			}
			fail.Store(false)
			q = start()
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := sink.Epoch(1), []vt.Row{{7, 2}}; !vt.RowsEqual(want, got) {
				t.Fatalf("epoch 1 after restart:\n%swant:\n%s", vt.FormatRows(got), vt.FormatRows(want))
			}
			q.Stop()
		})
	}
}

// TestSinkFailureAfterStateCommitReloadsVersion: the state of an epoch is
// committed before the sink's AddBatch; when the sink then fails, the
// re-run epoch reads the version it started from, not the one it
// committed (no update is counted twice).
func TestSinkFailureAfterStateCommitReloadsVersion(t *testing.T) {
	for name, open := range stateProviders(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			src := memsource.New(mem, valueSchema)
			defer src.Close()
			var failSink atomic.Bool
			sink := &collectsink.Sink{Fail: func(int64) error {
				if failSink.Load() {
					return errors.New("sink down")
				}
				return nil
			}}
			var never atomic.Bool
			w := &checkpoint.Writer{NoSync: true}
			start := func() *Query {
				return startTestQuery(t, dir, src, sink, newFaultCountExecutor(t, mem, faultProvider{open(w), &never, &never}), processingTime(0))
			}
			q := start()
			src.AddData([]any{5})
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			failSink.Store(true)
			src.AddData([]any{5}, []any{6})
			if err := q.AwaitTermination(ctx); err == nil || !strings.Contains(err.Error(), "sink down") {
				t.Fatalf("want the sink's failure, got %v", err)
			}
			failSink.Store(false)
			q = start()
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := vt.SortRows(sink.Epoch(1)), []vt.Row{{5, 2}, {6, 1}}; !vt.RowsEqual(want, got) {
				t.Fatalf("epoch 1 after restart:\n%swant:\n%s", vt.FormatRows(got), vt.FormatRows(want))
			}
			q.Stop()
		})
	}
}

// TestStateCommitErrorNeverReachesSink: the state is committed before the
// sink's AddBatch, so an epoch whose state commit fails is never in the
// sink, and a restart gives the right answer.
func TestStateCommitErrorNeverReachesSink(t *testing.T) {
	for name, open := range stateProviders(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			src := memsource.New(mem, valueSchema)
			defer src.Close()
			sink := &collectsink.Sink{}
			var fail, never atomic.Bool
			w := &checkpoint.Writer{NoSync: true}
			start := func() *Query {
				return startTestQuery(t, dir, src, sink, newFaultCountExecutor(t, mem, faultProvider{open(w), &never, &fail}), processingTime(0))
			}
			q := start()
			src.AddData([]any{1})
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			fail.Store(true)
			src.AddData([]any{1}, []any{2})
			if err := q.AwaitTermination(ctx); !errors.Is(err, errInjected) {
				t.Fatalf("the query should fail with the injected commit error, got %v", err)
			}
			if got := sink.Order(); len(got) != 1 {
				t.Fatalf("the sink holds epochs %v; only epoch 0 committed its state", got)
			}
			fail.Store(false)
			q = start()
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := vt.SortRows(sink.Epoch(1)), []vt.Row{{1, 2}, {2, 1}}; !vt.RowsEqual(want, got) {
				t.Fatalf("epoch 1 after restart:\n%swant:\n%s", vt.FormatRows(got), vt.FormatRows(want))
			}
			q.Stop()
		})
	}
}
