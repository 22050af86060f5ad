package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

func TestStatusLines(t *testing.T) {
	lines := statusLines([]queryInfo{
		{Name: "page_views", Status: "active", Message: "Waiting for data to arrive", HasBatch: true, BatchID: 42,
			NumInputRows: 0, InputRowsPerSecond: 200, ProcessedRowsPerSecond: 12345.6, BatchDurationMs: 17,
			Watermark: "2026-11-30T05:20:07.482Z", StateRows: 24, SinkRows: 1234567},
		{Name: "busy", Status: "active", Message: "Waiting for data to arrive", HasBatch: true, BatchID: 7,
			NumInputRows: 200, InputRowsPerSecond: 200, ProcessedRowsPerSecond: 400, BatchDurationMs: 5, SinkRows: 10},
		{Name: "idle", ID: "0123456789", Status: "failed"},
	})
	want := []string{
		"QUERY       EPOCH  INPUT/S  PROCESS/S  EPOCH TIME  WATERMARK  STATE ROWS  SINK ROWS  STATUS",
		"page_views     42      200      12.3k        17ms   05:20:07          24       1.2M  waiting for data to arrive",
		"busy            7      200        400         5ms          -           0         10  running",
		"idle            -        -          -           -          -           -          0  failed",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got := statusLines(nil); len(got) != 1 {
		t.Fatalf("no queries: %q", got)
	}
}

func TestStatusBoardKeepsLogsAbove(t *testing.T) {
	var out bytes.Buffer
	b := newStatusBoard(&out)
	b.width = func() int { return 20 }
	b.Show([]string{"line one", "a line that is longer than the terminal"})
	logger := slog.New(slog.NewTextHandler(b, nil))
	logger.Info("hello")
	b.Close()
	b.Show([]string{"ignored after Close"})
	s := out.String()
	// The log line goes where the board was (cursor up two lines, clear),
	// then the board is drawn again below it, cut to the width.
	i := strings.Index(s, "\x1b[2A\r\x1b[J")
	j := strings.Index(s, "msg=hello")
	if i < 0 || j < i || !strings.HasSuffix(s, "line one\na line that is long\n") || strings.Contains(s, "ignored") {
		t.Fatalf("board output: %q", s)
	}
}

func TestStatusLog(t *testing.T) {
	e := startDemo(t, 1)
	// Runs until two status lines are out (however slow the machine), with
	// a generous bound for a logger that never writes.
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runStatusLog(ctx, e.monitor, slog.New(slog.NewTextHandler(&out, nil)), 100*time.Millisecond)
	}()
	count := func() int { return strings.Count(out.String(), `msg="query status" query=page_views`) }
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for count() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if n := count(); n < 2 {
		t.Fatalf("%d status lines:\n%s", n, out.String())
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a goroutine writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStatusLinesEscapeNames: a table name or status holding a newline or
// a terminal escape sequence (an analyst's table name, a malformed record
// quoted in a failed query's error) is shown escaped on one line, and a
// long one is cut, so that the board keeps one line per query and nothing
// reaches the operator's terminal as a control sequence.
func TestStatusLinesEscapeNames(t *testing.T) {
	lines := statusLines([]queryInfo{
		{Name: "a\x1b[2J\x1b]0;owned\x07\nb", Status: "failed"},
		{Name: strings.Repeat("long", 1000), Status: "active", Message: "Restarting after failure: bad \r\x1b[31mrecord" + strings.Repeat("x", 1000)},
	})
	if len(lines) != 3 {
		t.Fatalf("%d lines for 2 queries: %q", len(lines), lines)
	}
	for _, l := range lines {
		for _, r := range l {
			if unicode.IsControl(r) {
				t.Fatalf("line %q holds the control character %U", l, r)
			}
		}
		if n := utf8.RuneCountInString(l); n > maxBoardName+maxBoardStatus+100 {
			t.Fatalf("a line of %d characters: %.100q", n, l)
		}
	}
	if !strings.HasPrefix(lines[1], `a\x1b[2J\x1b]0;owned\a\nb`) || !strings.Contains(lines[2], `bad \r\x1b[31mrecord`) || !strings.Contains(lines[2], "…") {
		t.Fatalf("escaped lines:\n%s", strings.Join(lines, "\n"))
	}
}
