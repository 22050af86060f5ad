package socket_test

import (
	"context"
	"fmt"
	"io"
	"net"
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

// lineServer listens on loopback; send waits for the next connection and
// writes the lines to it.
func lineServer(t *testing.T) (port int, send func(lines []string)) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- conn
		}
	}()
	var current net.Conn
	t.Cleanup(func() {
		ln.Close()
		if current != nil {
			current.Close()
		}
		for c := range conns {
			c.Close()
		}
	})
	send = func(lines []string) {
		select {
		case c := <-conns:
			if current != nil {
				current.Close()
			}
			current = c
		case <-time.After(testutil.Scaled(2 * time.Minute)):
			t.Fatal("no new connection")
		}
		if _, err := io.WriteString(current, strings.Join(lines, "\n")+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	return ln.Addr().(*net.TCPAddr).Port, send
}

func lines(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func TestParseOptions(t *testing.T) {
	cases := []struct {
		opts map[string]string
		err  string
	}{
		{map[string]string{"host": "localhost", "port": "9999", "includeTimestamp": "true", "maxBufferedLines": "5"}, ""},
		{map[string]string{"port": "9999"}, "option host must be specified"},
		{map[string]string{"host": "h"}, "option port must be specified"},
		{map[string]string{"host": "h", "port": "x"}, "option port=\"x\""},
		{map[string]string{"host": "h", "port": "70000"}, "option port=\"70000\": out of range"},
		{map[string]string{"host": "h", "port": "1", "includeTimestamp": "yes!"}, "option includeTimestamp"},
		{map[string]string{"host": "h", "port": "1", "maxBufferedLines": "0"}, "option maxBufferedLines=\"0\": must be positive"},
	}
	for _, c := range cases {
		_, err := socket.ParseOptions(c.opts)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: error %v, want %q", c.opts, err, c.err)
		}
	}
}

// TestSocketQuery: lines written to the socket reach the memory sink,
// with timestamps; a restarted query goes on with the new connection's
// lines and does not fail on the old offsets.
func TestSocketQuery(t *testing.T) {
	port, send := lineServer(t)
	dir := t.TempDir()
	run := func(prefix string, n int) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: dir, NoSync: true})
		socket.Install(s)
		sinks := memsink.NewCatalog()
		memsink.Install(s, sinks, memsink.Options{Persist: true})
		if err := s.RegisterSource("lines", "socket", nil, map[string]string{"host": "127.0.0.1", "port": strconv.Itoa(port), "includeTimestamp": "true"}); err != nil {
			t.Fatal(err)
		}
		q, err := s.ReadStream("lines").Select("value", "timestamp > TIMESTAMP '2020-01-01 00:00:00' AS recent").
			WriteStream().Format("memory").QueryName("out").Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		send(lines(prefix, n))
		tbl := func() []vt.Row {
			res, err := s.SQL(context.Background(), "SELECT value, recent FROM out")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			recs, err := vector.Drain(context.Background(), res.Op)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			return vt.RowsOf(recs...)
		}
		deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
		for {
			rows := tbl()
			got := 0
			for _, r := range rows {
				if strings.HasPrefix(r[0].(string), prefix) && r[1] == true {
					got++
				}
			}
			if got == n {
				break
			}
			if time.Now().After(deadline) || !q.IsActive() {
				t.Fatalf("%d of %d lines arrived (%v)", got, n, q.Exception())
			}
			time.Sleep(5 * time.Millisecond)
		}
		q.Stop()
		if err := q.Exception(); err != nil {
			t.Fatal(err)
		}
		for _, name := range sinks.List() {
			if tbl, ok := sinks.Drop(name); ok {
				tbl.Close()
			}
		}
		s.DropTable("lines")
	}
	run("a", 50)
	run("b", 30)
}

// TestSocketBackPressure: with a full buffer the source stops reading;
// the lines all arrive, in order, as epochs commit.
func TestSocketBackPressure(t *testing.T) {
	port, send := lineServer(t)
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src, err := socket.New(mem, socket.Options{Host: "127.0.0.1", Port: port, MaxBufferedLines: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	if _, err := src.LatestOffset(ctx); err != nil {
		t.Fatal(err)
	}
	send(lines("x", 1000))
	var committed arrowstream.Offset
	var got []string
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for len(got) < 1000 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d lines arrived", len(got))
		}
		time.Sleep(time.Millisecond)
		end, err := src.LatestOffsetFrom(ctx, committed)
		if err != nil {
			t.Fatal(err)
		}
		if end == nil || end.Equal(committed) {
			continue
		}
		op, err := src.Read(ctx, committed, end)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(ctx, op)
		op.Close()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range vt.RowsOf(recs...) {
			got = append(got, r[0].(string))
			n++
		}
		for _, r := range recs {
			r.Release()
		}
		if n > 10 {
			t.Fatalf("an epoch read %d lines: more than maxBufferedLines=10 were buffered", n)
		}
		committed = end
	}
	if strings.Join(got, ",") != strings.Join(lines("x", 1000), ",") {
		t.Fatalf("lines out of order or wrong: %v...", got[:10])
	}
}
