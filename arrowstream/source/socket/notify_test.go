package socket_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/socket"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestSocketNotifiesAndCountsLines: DataAvailable fires when a line is
// buffered after the call, and the metrics count lines read and buffered.
func TestSocketNotifiesAndCountsLines(t *testing.T) {
	port, send := lineServer(t)
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src, err := socket.New(mem, socket.Options{Host: "127.0.0.1", Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	ch := src.DataAvailable()
	if _, err := src.LatestOffset(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("notified before any line")
	case <-time.After(20 * time.Millisecond):
	}
	send(lines("x", 3))
	select {
	case <-ch:
	case <-time.After(testutil.Scaled(2 * time.Minute)):
		t.Fatal("no notification after a line arrived")
	}
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	var end arrowstream.Offset
	for src.Metrics()["numLinesRead"] != "3" {
		if time.Now().After(deadline) {
			t.Fatalf("metrics %v", src.Metrics())
		}
		time.Sleep(time.Millisecond)
	}
	if end, err = src.LatestOffset(ctx); err != nil {
		t.Fatal(err)
	}
	if got := src.Metrics(); got["numLinesBuffered"] != "3" {
		t.Fatalf("metrics %v, want 3 buffered", got)
	}
	if err := src.Commit(ctx, end); err != nil {
		t.Fatal(err)
	}
	if got := src.Metrics(); got["numLinesRead"] != "3" || got["numLinesBuffered"] != "0" {
		t.Fatalf("metrics after commit %v, want 3 read, 0 buffered", got)
	}
}

// TestSocketContinuousQuery: a continuous query over the socket sees each
// line through the notification alone: the poll interval and the epoch
// interval are an hour, and rows are shown on arrival.
func TestSocketContinuousQuery(t *testing.T) {
	port, send := lineServer(t)
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true})
	socket.Install(s)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{})
	defer func() {
		for _, name := range sinks.List() {
			if tbl, ok := sinks.Drop(name); ok {
				tbl.Close()
			}
		}
	}()
	if err := s.RegisterSource("lines", "socket", nil, map[string]string{"host": "127.0.0.1", "port": strconv.Itoa(port)}); err != nil {
		t.Fatal(err)
	}
	defer s.DropTable("lines")
	q, err := s.ReadStream("lines").Select("upper(value) AS v").WriteStream().Format("memory").QueryName("out").
		Trigger(arrowstream.Continuous(time.Hour)).Option("continuous.pollInterval", "1h").
		Option("continuous.visibility", "arrival").Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	rows := func() []string {
		res, err := s.SQL(context.Background(), "SELECT v FROM out")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		recs, err := vector.Drain(context.Background(), res.Op)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range vt.RowsOf(recs...) {
			out = append(out, r[0].(string))
		}
		for _, r := range recs {
			r.Release()
		}
		return out
	}
	send(lines("a", 20))
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		got := rows()
		if len(got) == 20 {
			if strings.Join(got, ",") != strings.ToUpper(strings.Join(lines("a", 20), ",")) {
				t.Fatalf("rows %v", got)
			}
			break
		}
		if time.Now().After(deadline) || !q.IsActive() {
			t.Fatalf("%d of 20 lines arrived (%v)", len(got), q.Exception())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := q.Exception(); err != nil {
		t.Fatal(err)
	}
}
