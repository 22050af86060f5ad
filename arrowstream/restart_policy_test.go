package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// flakySource is a MemoryStream whose reads fail while failures are
// left: the odd failures at Read, the even ones in the middle of the
// epoch's input (after its first batch reached the plan).
type flakySource struct {
	*MemoryStream
	mu    sync.Mutex
	left  int
	fail  error
	reads int
	// held is the latest offset announced while holding.
	held    stream.Offset
	holding bool
}

// hold makes the source announce no data beyond what it holds now, until
// release: data added in between lands in one epoch, whatever the
// trigger does meanwhile.
func (f *flakySource) hold(ctx context.Context) {
	off, _ := f.MemoryStream.LatestOffset(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held, f.holding = off, true
}

func (f *flakySource) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held, f.holding = nil, false
}

func (f *flakySource) LatestOffset(ctx context.Context) (stream.Offset, error) {
	f.mu.Lock()
	held, holding := f.held, f.holding
	f.mu.Unlock()
	if holding {
		return held, nil
	}
	return f.MemoryStream.LatestOffset(ctx)
}

func (f *flakySource) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	f.mu.Lock()
	held, holding := f.held, f.holding
	f.mu.Unlock()
	if holding {
		return held, nil
	}
	return f.MemoryStream.LatestOffsetFrom(ctx, start)
}

func (f *flakySource) arm(n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left, f.fail = n, err
}

func (f *flakySource) Read(ctx context.Context, start, end stream.Offset) (vector.Operator, error) {
	f.mu.Lock()
	f.reads++
	left, failErr, n := f.left, f.fail, f.reads
	if left > 0 {
		f.left--
	}
	f.mu.Unlock()
	if left > 0 && n%2 == 1 {
		return nil, failErr
	}
	op, err := f.MemoryStream.Read(ctx, start, end)
	if err != nil || left == 0 {
		return op, err
	}
	return &failAfterFirst{Operator: op, err: failErr}, nil
}

// failAfterFirst passes its input's first batch and then fails.
type failAfterFirst struct {
	vector.Operator
	err    error
	passed bool
}

func (f *failAfterFirst) Next(ctx context.Context) (arrow.Record, error) {
	if f.passed {
		return nil, f.err
	}
	f.passed = true
	return f.Operator.Next(ctx)
}

func startFlaky(t *testing.T, s *Session, sink *collectsink.Sink, dir string, opts map[string]string) *StreamingQuery {
	t.Helper()
	w := s.ReadStream("input").GroupBy("value").Agg("count(*)").
		WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", dir)
	for k, v := range opts {
		w.Option(k, v)
	}
	q, err := w.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestRestartPolicyRecoversExactlyOnce: under restartPolicy on-failure a
// source that fails twice (once at Read, once in the middle of the
// epoch's input, after rows reached the aggregation) and then recovers
// restarts the query from its checkpoint; every row is counted once.
func TestRestartPolicyRecoversExactlyOnce(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	ms := NewMemoryStream(mem, valueSchema)
	defer ms.Close()
	src := &flakySource{MemoryStream: ms}
	s.RegisterStream("input", src)
	sink := &collectsink.Sink{}
	q := startFlaky(t, s, sink, t.TempDir(), map[string]string{
		"restartPolicy": "on-failure", "restartMaxAttempts": "2", "restartBackoff": "5 ms"})
	defer q.Stop()
	addInts(t, ms, 1, 1, 2)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	src.arm(2, errors.New("broker unavailable"))
	// Several batches in one epoch, so that the mid-input failure comes
	// after rows were aggregated (held back until both are in, or the
	// trigger may run the first alone).
	src.hold(ctx)
	addInts(t, ms, 1, 3)
	addInts(t, ms, 3, 3)
	src.release()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := q.ProcessAllAvailable(tctx); err != nil {
		t.Fatal(err)
	}
	if !q.IsActive() {
		t.Fatalf("query ended: %v", q.Exception())
	}
	n, last := q.Restarts()
	if n != 2 || last == nil || !strings.Contains(last.Error(), "broker unavailable") {
		t.Fatalf("restarts = %d (%v), want 2 caused by the source", n, last)
	}
	want := vt.SortRows([]vt.Row{{1, 3}, {3, 3}})
	if got := vt.SortRows(sink.Last()); !vt.RowsEqual(want, got) {
		t.Fatalf("epoch after restarts: %v, want %v (each row counted once)", got, want)
	}
	if order := sink.Order(); len(order) != 2 || order[0] != 0 || order[1] != 1 {
		t.Fatalf("sink epochs %v, want [0 1]", order)
	}
	// The count resets after a committed epoch: two more failures are
	// allowed again.
	src.arm(2, errors.New("broker unavailable again"))
	addInts(t, ms, 2)
	if err := q.ProcessAllAvailable(tctx); err != nil {
		t.Fatal(err)
	}
	if got := vt.SortRows(sink.Last()); !vt.RowsEqual([]vt.Row{{2, 2}}, got) {
		t.Fatalf("third epoch: %v", got)
	}
	if n, _ := q.Restarts(); n != 4 {
		t.Fatalf("restarts = %d, want 4", n)
	}
}

// TestRestartPolicyExhausted: more consecutive failures than
// restartMaxAttempts leave the query failed with the cause and the count.
func TestRestartPolicyExhausted(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	ms := NewMemoryStream(mem, valueSchema)
	defer ms.Close()
	src := &flakySource{MemoryStream: ms}
	s.RegisterStream("input", src)
	src.arm(1000, errors.New("disk on fire"))
	q := startFlaky(t, s, &collectsink.Sink{}, t.TempDir(), map[string]string{
		"restartpolicy": "ON-FAILURE", "restartmaxattempts": "3", "restartbackoff": "1ms"})
	addInts(t, ms, 1)
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err := q.AwaitTermination(tctx)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "after 3 consecutive restarts") {
		t.Fatalf("query ended with %v, want the cause after 3 restarts", err)
	}
	if n, _ := q.Restarts(); n != 3 {
		t.Fatalf("restarts = %d, want 3", n)
	}
	src.mu.Lock()
	reads := src.reads
	src.mu.Unlock()
	if reads != 4 {
		t.Fatalf("%d reads, want 4 (the first run and 3 restarts)", reads)
	}
}

// TestRestartPolicyDefaultAndPermanent: without the policy the first
// failure ends the query; with it, a failure marked stream.ErrPermanent
// does too.
func TestRestartPolicyDefaultAndPermanent(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts map[string]string
		err  error
	}{
		{"default", nil, errors.New("transient")},
		{"explicit fail", map[string]string{"restartPolicy": "fail"}, errors.New("transient")},
		{"permanent", map[string]string{"restartPolicy": "on-failure", "restartBackoff": "1ms"},
			fmt.Errorf("schema changed: %w", stream.ErrPermanent)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, mem := newTestSession(t)
			ms := NewMemoryStream(mem, valueSchema)
			defer ms.Close()
			src := &flakySource{MemoryStream: ms}
			s.RegisterStream("input", src)
			src.arm(1, tc.err)
			q := startFlaky(t, s, &collectsink.Sink{}, t.TempDir(), tc.opts)
			addInts(t, ms, 1)
			tctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := q.AwaitTermination(tctx); !errors.Is(err, tc.err) {
				t.Fatalf("query ended with %v, want %v", err, tc.err)
			}
			if n, _ := q.Restarts(); n != 0 {
				t.Fatalf("restarted %d times", n)
			}
		})
	}
}

// TestRestartPolicyOptionsRefused: every bad restart setting is refused at
// start, naming the option.
func TestRestartPolicyOptionsRefused(t *testing.T) {
	s, mem := newTestSession(t)
	ms := NewMemoryStream(mem, valueSchema)
	defer ms.Close()
	s.RegisterStream("input", ms)
	for _, tc := range []struct {
		opts    map[string]string
		trigger Trigger
		want    string
	}{
		{map[string]string{"restartPolicy": "always"}, Trigger{}, `restartPolicy "always"`},
		{map[string]string{"restartMaxAttempts": "3"}, Trigger{}, "need restartPolicy 'on-failure'"},
		{map[string]string{"restartPolicy": "fail", "restartBackoff": "1 s"}, Trigger{}, "need restartPolicy 'on-failure'"},
		{map[string]string{"restartPolicy": "on-failure", "restartMaxAttempts": "0"}, Trigger{}, `restartMaxAttempts "0"`},
		{map[string]string{"restartPolicy": "on-failure", "restartMaxAttempts": "x"}, Trigger{}, `restartMaxAttempts "x"`},
		{map[string]string{"restartPolicy": "on-failure", "restartBackoff": "soon"}, Trigger{}, `restartBackoff "soon"`},
		{map[string]string{"restartPolicy": "on-failure", "restartBackoff": "1 hour"}, Trigger{}, "at most 5m0s"},
		{map[string]string{"restartPolicy": "on-failure"}, Continuous(time.Second), "not a continuous one"},
	} {
		w := s.ReadStream("input").WriteStream().Sink(&collectsink.Sink{}).Trigger(tc.trigger)
		for k, v := range tc.opts {
			w.Option(k, v)
		}
		q, err := w.Start(context.Background())
		if err == nil {
			q.Stop()
			t.Fatalf("%v: started", tc.opts)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestFailEndsQueryWithCause: Fail stops a running query with the cause as
// its exception, without restarting it under restartPolicy on-failure.
func TestFailEndsQueryWithCause(t *testing.T) {
	s, mem := newTestSession(t)
	ms := NewMemoryStream(mem, valueSchema)
	defer ms.Close()
	s.RegisterStream("input", ms)
	q := startFlaky(t, s, &collectsink.Sink{}, t.TempDir(), map[string]string{"restartPolicy": "on-failure", "restartBackoff": "1ms"})
	addInts(t, ms, 1)
	if err := q.ProcessAllAvailable(context.Background()); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("RESOURCE_EXHAUSTED: over quota")
	q.Fail(cause)
	if q.IsActive() || !errors.Is(q.Exception(), cause) {
		t.Fatalf("active %v, exception %v", q.IsActive(), q.Exception())
	}
	if err := q.AwaitTermination(context.Background()); !errors.Is(err, cause) {
		t.Fatalf("AwaitTermination: %v", err)
	}
	if n, _ := q.Restarts(); n != 0 {
		t.Fatalf("restarted %d times", n)
	}
	q.Fail(errors.New("again")) // an ended query: nothing happens
	if !errors.Is(q.Exception(), cause) {
		t.Fatalf("exception changed to %v", q.Exception())
	}
}
