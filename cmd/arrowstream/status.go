package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is w's width in columns (80 when unknown).
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			return cols
		}
	}
	return 80
}

// statusBoard is the live status at the bottom of a terminal: one line per
// query, redrawn in place. Log lines written through it (Write) appear
// above the board, which is then drawn again below them. Safe for
// concurrent use.
type statusBoard struct {
	out   io.Writer
	width func() int

	mu     sync.Mutex
	drawn  int      // lines of the board on the screen
	lines  []string // the board's current lines
	closed bool
}

func newStatusBoard(out io.Writer) *statusBoard {
	return &statusBoard{out: out, width: func() int { return terminalWidth(out) }}
}

// eraseLocked moves to the start of the board and clears it.
func (b *statusBoard) eraseLocked(buf *strings.Builder) {
	if b.drawn > 0 {
		fmt.Fprintf(buf, "\x1b[%dA", b.drawn)
	}
	buf.WriteString("\r\x1b[J")
	b.drawn = 0
}

func (b *statusBoard) drawLocked(buf *strings.Builder) {
	w := b.width()
	for _, l := range b.lines {
		// Longer lines would wrap, and the board would no longer know how
		// many lines to go back up.
		if r := []rune(l); len(r) >= w {
			l = string(r[:max(w-1, 0)])
		}
		buf.WriteString(l)
		buf.WriteString("\n")
		b.drawn++
	}
}

// Show replaces the board's lines.
func (b *statusBoard) Show(lines []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.lines = lines
	var buf strings.Builder
	b.eraseLocked(&buf)
	b.drawLocked(&buf)
	io.WriteString(b.out, buf.String())
}

// Write prints p (whole log lines) above the board.
func (b *statusBoard) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.out.Write(p)
	}
	var buf strings.Builder
	b.eraseLocked(&buf)
	buf.Write(p)
	b.drawLocked(&buf)
	if _, err := io.WriteString(b.out, buf.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close leaves the last board on the screen; later writes go below it.
func (b *statusBoard) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
}

// statusLines renders the board: a header and one line per query.
func statusLines(qs []queryInfo) []string {
	if len(qs) == 0 {
		return []string{"no streaming queries (create one with CREATE STREAMING TABLE)"}
	}
	rows := [][]string{{"QUERY", "EPOCH", "INPUT/S", "PROCESS/S", "EPOCH TIME", "WATERMARK", "STATE ROWS", "SINK ROWS", "STATUS"}}
	for _, q := range qs {
		name := q.Name
		if name == "" {
			name = q.ID[:min(8, len(q.ID))]
		}
		row := []string{name, "-", "-", "-", "-", "-", "-", "-", q.Status}
		if q.HasBatch {
			row[1] = strconv.FormatInt(q.BatchID, 10)
			row[2] = compact(q.InputRowsPerSecond)
			row[3] = compact(q.ProcessedRowsPerSecond)
			row[4] = fmt.Sprintf("%dms", q.BatchDurationMs)
			row[5] = shortTime(q.Watermark)
			row[6] = compact(float64(q.StateRows))
		}
		row[7] = compact(float64(q.SinkRows))
		if q.Status == "active" && q.Message != "" {
			row[8] = strings.ToLower(q.Message)
			// Spark's message between triggers reads "waiting for data"
			// even when every epoch has input: say so only when the last
			// epoch had none.
			if q.HasBatch && q.NumInputRows > 0 && strings.HasPrefix(row[8], "waiting for data") {
				row[8] = "running"
			}
		}
		row[0], row[8] = boardCell(row[0], maxBoardName), boardCell(row[8], maxBoardStatus)
		rows = append(rows, row)
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	out := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			if i == 0 || i == len(r)-1 || j == 0 {
				fmt.Fprintf(&b, "%-*s", widths[i], c)
			} else {
				fmt.Fprintf(&b, "%*s", widths[i], c)
			}
		}
		out[j] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// The board's widest name and status cells: names are chosen by whoever
// may create a table, and the status quotes a failed query's error.
const (
	maxBoardName   = 64
	maxBoardStatus = 160
)

// boardCell makes a name or status fit one line of the board: control
// characters (a newline, which broke the board's line count, or an escape
// sequence, which a table name or a malformed record quoted in an error
// sent to the operator's terminal) are shown escaped, and a cell longer
// than max characters ends in "…".
func boardCell(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}

// compact renders a count or rate in at most about 6 characters.
func compact(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 1, 64) + "G"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case v == float64(int64(v)):
		return strconv.FormatInt(int64(v), 10)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

// shortTime shows a progress timestamp as HH:MM:SS (UTC).
func shortTime(s string) string {
	if s == "" {
		return "-"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	if t.UnixMilli() <= 0 {
		return "-"
	}
	return t.UTC().Format("15:04:05")
}

// runStatusBoard redraws the board at every monitor event, at most every
// 250 ms and at least every second, until ctx ends.
func runStatusBoard(ctx context.Context, mon *monitor, b *statusBoard) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		changed := mon.Changed()
		b.Show(statusLines(mon.Queries()))
		select {
		case <-ctx.Done():
			b.Close()
			return
		case <-tick.C:
		case <-changed:
			select { // coalesce bursts
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// runStatusLog logs one line per query every interval until ctx ends: the
// status display when the output is not a terminal.
func runStatusLog(ctx context.Context, mon *monitor, logger *slog.Logger, interval time.Duration) {
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, q := range mon.Queries() {
			if q.Status != "active" {
				continue
			}
			logger.Info("query status", "query", q.Name, "epoch", q.BatchID,
				"inputRowsPerSecond", round1(q.InputRowsPerSecond), "processedRowsPerSecond", round1(q.ProcessedRowsPerSecond),
				"epochMs", q.BatchDurationMs, "watermark", q.Watermark, "stateRows", q.StateRows, "sinkRows", q.SinkRows)
		}
	}
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
