package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/checkpoint"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// epochRows records what a foreach function or writer saw, in call order.
type epochRows struct {
	mu    sync.Mutex
	calls []int64
	rows  map[int64][]vt.Row
}

func (e *epochRows) add(epoch int64, recs ...arrow.Record) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rows == nil {
		e.rows = map[int64][]vt.Row{}
	}
	e.calls = append(e.calls, epoch)
	e.rows[epoch] = vt.RowsOf(recs...)
}

func (e *epochRows) snapshot() ([]int64, map[int64][]vt.Row) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rows := map[int64][]vt.Row{}
	for k, v := range e.rows {
		rows[k] = v
	}
	return append([]int64(nil), e.calls...), rows
}

var errUserFunc = errors.New("user function failed")

// TestForeachBatchReplaysFailedEpochAfterRestart: the function fails on
// epoch 1; the query fails naming the epoch; a restart replays epoch 1 with
// the same id and rows and then continues with epoch 2.
func TestForeachBatchReplaysFailedEpochAfterRestart(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	seen := &epochRows{}
	failOn := int64(1)
	fn := func(_ context.Context, recs []arrow.Record, epoch int64) error {
		seen.add(epoch, recs...)
		if epoch == failOn {
			failOn = -1 // fail once
			return errUserFunc
		}
		return nil
	}
	start := func() *StreamingQuery {
		t.Helper()
		q, err := s.ReadStream("input").Select("value * 10 AS v").WriteStream().
			ForeachBatch(fn).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start()
	addInts(t, src, 1, 2)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	addInts(t, src, 3, 4)
	err := q.AwaitTermination(ctx)
	if !errors.Is(err, errUserFunc) || !strings.Contains(err.Error(), "epoch 1") {
		t.Fatalf("query error = %v, want the function's error naming epoch 1", err)
	}

	q = start()
	defer q.Stop()
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	addInts(t, src, 5)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	q.Stop()
	calls, rows := seen.snapshot()
	if fmt.Sprint(calls) != "[0 1 1 2]" {
		t.Fatalf("epochs called %v, want [0 1 1 2] (epoch 1 replayed once)", calls)
	}
	want := map[int64][]vt.Row{0: {{10}, {20}}, 1: {{30}, {40}}, 2: {{50}}}
	for e, w := range want {
		if !vt.RowsEqual(w, rows[e]) {
			t.Fatalf("epoch %d rows %v, want %v", e, rows[e], w)
		}
	}
}

// dedupWriter writes each epoch once: Open declines epochs it has already
// committed (the pattern the ForeachWriter doc recommends).
type dedupWriter struct {
	opened    []int64
	committed map[int64][]vt.Row
	cur       int64
	pending   []vt.Row
}

func (w *dedupWriter) Open(_ context.Context, partition, epoch int64) (bool, error) {
	if partition != 0 {
		return false, fmt.Errorf("partition %d", partition)
	}
	w.opened = append(w.opened, epoch)
	if _, done := w.committed[epoch]; done {
		return false, nil
	}
	w.cur, w.pending = epoch, nil
	return true, nil
}

func (w *dedupWriter) Process(_ context.Context, rec arrow.Record) error {
	w.pending = append(w.pending, vt.RowsOf(rec)...)
	return nil
}

func (w *dedupWriter) Close(err error) error {
	if err == nil && w.pending != nil {
		w.committed[w.cur] = w.pending
	}
	w.pending = nil
	return nil
}

// TestForeachWriterRestartDedup loses the commit of epoch 1 (as a crash
// between the sink and the commit log would): the restart opens epoch 1
// again with the same id, the writer declines it, and epoch ids continue.
func TestForeachWriterRestartDedup(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	w := &dedupWriter{committed: map[int64][]vt.Row{}}
	start := func() *StreamingQuery {
		t.Helper()
		q, err := s.ReadStream("input").WriteStream().Foreach(w).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start()
	for _, vals := range [][]int{{1, 2}, {3}} {
		addInts(t, src, vals...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q.Stop()
	// Forget that epoch 1 was committed: it re-runs.
	commits, err := checkpoint.OpenCommitLog(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := commits.Drop(2); err != nil {
		t.Fatal(err)
	}
	commits.Close()
	q = start()
	defer q.Stop()
	addInts(t, src, 4)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	q.Stop()
	if fmt.Sprint(w.opened) != "[0 1 1 2]" {
		t.Fatalf("opened %v, want [0 1 1 2]", w.opened)
	}
	want := map[int64][]vt.Row{0: {{1}, {2}}, 1: {{3}}, 2: {{4}}}
	if fmt.Sprint(w.committed) != fmt.Sprint(want) {
		t.Fatalf("committed %v, want %v", w.committed, want)
	}
}

// scriptedWriter fails where told and logs its calls.
type scriptedWriter struct {
	accept           bool
	openErr, procErr error
	closeErr         error
	log              []string
}

func (w *scriptedWriter) Open(_ context.Context, p, e int64) (bool, error) {
	w.log = append(w.log, fmt.Sprintf("open(%d,%d)", p, e))
	return w.accept, w.openErr
}

func (w *scriptedWriter) Process(_ context.Context, rec arrow.Record) error {
	w.log = append(w.log, fmt.Sprintf("process(%d)", rec.NumRows()))
	return w.procErr
}

func (w *scriptedWriter) Close(err error) error {
	w.log = append(w.log, fmt.Sprintf("close(%v)", err))
	return w.closeErr
}

func TestForeachWriterLifecycle(t *testing.T) {
	cases := []struct {
		name    string
		w       *scriptedWriter
		wantLog string
		wantErr string // substring of the query error; "" for none
	}{
		{"accept", &scriptedWriter{accept: true}, "[open(0,0) process(3) close(<nil>)]", ""},
		{"decline", &scriptedWriter{}, "[open(0,0) close(<nil>)]", ""},
		{"open error", &scriptedWriter{openErr: errUserFunc}, "[open(0,0)]", "epoch 0: foreach writer: open partition 0: user function failed"},
		{"process error", &scriptedWriter{accept: true, procErr: errUserFunc}, "[open(0,0) process(3) close(user function failed)]", "epoch 0: foreach writer: process: user function failed"},
		{"close error", &scriptedWriter{accept: true, closeErr: errUserFunc}, "[open(0,0) process(3) close(<nil>)]", "epoch 0: foreach writer: close: user function failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, mem := newTestSession(t)
			src := NewMemoryStream(mem, valueSchema)
			defer src.Close()
			s.RegisterStream("input", src)
			addInts(t, src, 1, 2, 3)
			q, err := s.ReadStream("input").WriteStream().Foreach(tc.w).Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Stop()
			err = q.ProcessAllAvailable(ctx)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, errUserFunc)):
				t.Fatalf("error %v, want %q wrapping the writer's error", err, tc.wantErr)
			}
			q.Stop()
			if got := fmt.Sprint(tc.w.log); got != tc.wantLog {
				t.Fatalf("calls %s, want %s", got, tc.wantLog)
			}
		})
	}
}

func TestForeachNilArguments(t *testing.T) {
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	if _, err := s.ReadStream("input").WriteStream().Foreach(nil).Start(context.Background()); err == nil {
		t.Fatal("Foreach(nil) started")
	}
	if _, err := s.ReadStream("input").WriteStream().ForeachBatch(nil).Start(context.Background()); err == nil {
		t.Fatal("ForeachBatch(nil) started")
	}
}
