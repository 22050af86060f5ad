package arrowstream

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

var errSinkFailed = errors.New("sink failed")

// closingSink counts CloseSink calls; it fails AddBatch when fail is set.
type closingSink struct {
	closes atomic.Int32
	fail   bool
}

func (c *closingSink) AddBatch(_ context.Context, _ int64, data vector.Operator) error {
	defer data.Close()
	recs, err := vector.Drain(context.Background(), data)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return err
	}
	if c.fail {
		return errSinkFailed
	}
	return nil
}

func (c *closingSink) CloseSink() error { c.closes.Add(1); return nil }

// TestClosingSinkClosedOnceWhenQueryEnds: the engine closes a
// format-created ClosingSink once whether the query is stopped, fails, or
// cannot start; a sink passed to Sink(...) stays its caller's.
func TestClosingSinkClosedOnceWhenQueryEnds(t *testing.T) {
	cases := []struct {
		name      string
		fail      bool // AddBatch fails: the query ends with an error
		userSink  bool // passed with Sink(...), not created from a format
		badStart  bool // Start fails after the sink was created
		wantClose int32
	}{
		{name: "stopped", wantClose: 1},
		{name: "failed", fail: true, wantClose: 1},
		{name: "start fails", badStart: true, wantClose: 1},
		{name: "user sink", userSink: true, wantClose: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			s, mem := newTestSession(t)
			src := NewMemoryStream(mem, valueSchema)
			defer src.Close()
			s.RegisterStream("input", src)
			sink := &closingSink{fail: c.fail}
			s.RegisterSinkFormat("closing", func(context.Context, memory.Allocator, SinkInfo) (Sink, error) { return sink, nil })
			w := s.ReadStream("input").Select("value").WriteStream().Option("checkpointLocation", t.TempDir())
			if c.userSink {
				w = w.Sink(sink)
			} else {
				w = w.Format("closing")
			}
			if c.badStart {
				// Arrival visibility needs an ArrivalSink: Start fails
				// after the format created the sink.
				w = w.Trigger(Continuous(0)).Option("continuous.visibility", "arrival")
			}
			q, err := w.Start(ctx)
			if c.badStart {
				if err == nil || !strings.Contains(err.Error(), "arrival") {
					t.Fatalf("Start: %v, want the arrival error", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				addInts(t, src, 1, 2)
				err = q.ProcessAllAvailable(ctx)
				if c.fail != (err != nil) {
					t.Fatalf("process: %v", err)
				}
				if sink.closes.Load() != 0 && !c.fail {
					t.Fatal("sink closed while the query runs")
				}
				q.Stop()
				q.Stop()
				if c.fail && !errors.Is(q.Exception(), errSinkFailed) {
					t.Fatalf("exception %v", q.Exception())
				}
			}
			if got := sink.closes.Load(); got != c.wantClose {
				t.Fatalf("CloseSink called %d times, want %d", got, c.wantClose)
			}
		})
	}
}
