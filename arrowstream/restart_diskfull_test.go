package arrowstream

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// fullDiskSink is a sink whose writes fail with ENOSPC (as the file sink's
// do on a full disk) while full is set.
type fullDiskSink struct {
	*collectsink.Sink
	mu    sync.Mutex
	full  bool
	fails int
}

func (s *fullDiskSink) setFull(full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = full
}

func (s *fullDiskSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	s.mu.Lock()
	full := s.full
	if full {
		s.fails++
	}
	s.mu.Unlock()
	if full {
		data.Close() // the sink owns the epoch's rows
		return &os.PathError{Op: "write", Path: "/data/out/part-0", Err: syscall.ENOSPC}
	}
	return s.Sink.AddBatch(ctx, epoch, data)
}

// TestRestartPolicyResumesAfterDiskFull: under restartPolicy on-failure
// a query whose sink write fails with "no space left on device" keeps
// restarting from its checkpoint (with backoff) while the disk is full,
// and resumes by itself once space returns: the epoch is written once,
// each row counted once, without a restart of the process.
func TestRestartPolicyResumesAfterDiskFull(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	ms := NewMemoryStream(mem, valueSchema)
	defer ms.Close()
	s.RegisterStream("input", ms)
	sink := &fullDiskSink{Sink: &collectsink.Sink{}}
	w := s.ReadStream("input").GroupBy("value").Agg("count(*)").
		WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", t.TempDir()).
		Option("restartPolicy", "on-failure").Option("restartMaxAttempts", "1000").Option("restartBackoff", "5 ms")
	q, err := w.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	addInts(t, ms, 1, 1, 2)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	sink.setFull(true)
	addInts(t, ms, 1, 3)
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, last := q.Restarts()
		if n >= 2 {
			if last == nil || !errors.Is(last, syscall.ENOSPC) || !strings.Contains(last.Error(), "no space left") {
				t.Fatalf("restarted for %v, want the full disk", last)
			}
			break
		}
		if !q.IsActive() {
			t.Fatalf("the query ended on a full disk: %v", q.Exception())
		}
		if time.Now().After(deadline) {
			t.Fatal("no restarts while the disk was full")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sink.setFull(false)
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := q.ProcessAllAvailable(tctx); err != nil {
		t.Fatal(err)
	}
	if !q.IsActive() {
		t.Fatalf("query ended: %v", q.Exception())
	}
	want := vt.SortRows([]vt.Row{{1, 3}, {3, 1}})
	if got := vt.SortRows(sink.Last()); !vt.RowsEqual(want, got) {
		t.Fatalf("epoch after the disk had space again: %v, want %v (each row counted once)", got, want)
	}
	if order := sink.Order(); len(order) != 2 || order[0] != 0 || order[1] != 1 {
		t.Fatalf("sink epochs %v, want [0 1]", order)
	}
}
