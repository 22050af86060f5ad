package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"

	"github.com/arrowstream/arrowstream/server"
)

// Live views of SUBSCRIBE. An append table's rows scroll: each epoch is
// printed under a line naming it. Update and complete tables are drawn
// as one table that is redrawn in place at each epoch (cursor up, clear
// to the end of the screen) when the output is a terminal, reprinted
// otherwise: complete replaces the rows with the epoch's result, update
// merges the epoch's rows by the table's key columns. The csv, json and
// line modes print every row as it arrives, with its _epoch.

// liveView is the state of one followed subscription.
type liveView struct {
	s       *shell
	mode    string   // append, update or complete (from the stream's schema)
	keys    []int    // key column indexes (update)
	names   []string // the table's columns (without the epoch columns)
	epoch   int64
	commit  time.Time
	rows    [][]string
	index   map[string]int // update: key → row
	drawn   int            // lines of the last drawing
	started bool
}

// follow shows a subscription stream until it ends or ctx is cancelled.
func (s *shell) follow(ctx context.Context, rdr *flight.Reader) error {
	schema := rdr.Schema()
	v := &liveView{s: s, mode: "append", epoch: -1, index: map[string]int{}}
	if m, ok := schema.Metadata().GetValue(server.OutputModeMetadataKey); ok {
		v.mode = m
	}
	n := schema.NumFields() - 2 // _epoch, _commit_timestamp
	for i := range n {
		v.names = append(v.names, schema.Field(i).Name)
	}
	if k, ok := schema.Metadata().GetValue(server.KeyColumnsMetadataKey); ok && k != "" {
		for _, name := range strings.Split(k, ",") {
			for i, f := range v.names {
				if f == name {
					v.keys = append(v.keys, i)
				}
			}
		}
	}
	after, _ := schema.Metadata().GetValue(server.EpochMetadataKey)
	fmt.Fprintf(s.out, "Following %s mode from after epoch %s; Ctrl-C stops.\n", v.mode, after)
	if s.mode != formatTable {
		return s.followRows(ctx, rdr)
	}
	for rdr.Next() {
		v.add(rdr.Record())
	}
	return liveEnd(ctx, rdr.Err())
}

// liveEnd: a live view ended by Ctrl-C is not an error.
func liveEnd(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// followRows prints rows as they arrive in csv, json or line mode.
func (s *shell) followRows(ctx context.Context, rdr *flight.Reader) error {
	err := s.print(ctx, readerStream{rdr})
	return liveEnd(ctx, err)
}

// add takes one record of the stream.
func (v *liveView) add(rec arrow.Record) {
	n := int(rec.NumCols()) - 2
	epochs := rec.Column(n).(*array.Int64)
	commits := rec.Column(n + 1).(*array.Timestamp)
	epoch, commit := v.epoch+1, time.Now()
	if rec.NumRows() > 0 {
		epoch = epochs.Value(0)
		commit = time.UnixMicro(int64(commits.Value(0))).UTC()
	}
	newEpoch := !v.started || epoch != v.epoch || rec.NumRows() == 0
	v.started = true
	v.epoch, v.commit = epoch, commit
	rows := make([][]string, rec.NumRows())
	for i := range rows {
		row := make([]string, n)
		for c := range n {
			row[c] = controlEscaper.Replace(cellText(rec.Column(c), i))
		}
		rows[i] = row
	}
	switch v.mode {
	case "complete":
		if newEpoch {
			v.rows = v.rows[:0]
		}
		v.rows = append(v.rows, rows...)
	case "update":
		if len(v.keys) == 0 {
			if newEpoch {
				v.rows = v.rows[:0]
			}
			v.rows = append(v.rows, rows...)
			break
		}
		for _, r := range rows {
			k := v.key(r)
			if i, ok := v.index[k]; ok {
				v.rows[i] = r
			} else {
				v.index[k] = len(v.rows)
				v.rows = append(v.rows, r)
			}
		}
	default: // append: scroll
		if rec.NumRows() == 0 {
			return
		}
		fmt.Fprintf(v.s.out, "-- epoch %d, committed %s, %d rows\n", epoch, formatTime(commit), len(rows))
		renderTable(v.s.out, v.names, rows, 0)
		return
	}
	v.redraw()
}

func (v *liveView) key(row []string) string {
	var b strings.Builder
	for _, k := range v.keys {
		b.WriteString(strconv.Quote(row[k]))
	}
	return b.String()
}

// redraw draws the table over the previous drawing.
func (v *liveView) redraw() {
	var b strings.Builder
	limit := 0
	if v.s.interactive {
		if v.drawn > 0 {
			fmt.Fprintf(&b, "\x1b[%dA\x1b[J", v.drawn)
		}
		limit = max(v.s.height()-5, 3)
	}
	fmt.Fprintf(&b, "epoch %d, committed %s, %d rows (Ctrl-C stops)\n", v.epoch, formatTime(v.commit), len(v.rows))
	renderTable(&b, v.names, v.rows, limit)
	text := b.String()
	io.WriteString(v.s.out, text)
	v.drawn = strings.Count(text[strings.LastIndex(text, "\x1b[J")+1:], "\n")
}

// renderTable writes rows as an aligned table; limit > 0 shows at most
// that many rows and says how many more there are.
func renderTable(w io.Writer, names []string, rows [][]string, limit int) {
	widths := make([]int, len(names))
	for i, n := range names {
		widths[i] = displayWidth(n)
	}
	shown := rows
	if limit > 0 && len(rows) > limit {
		shown = rows[:limit]
	}
	for _, r := range shown {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)))
			}
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
	line(names)
	seps := make([]string, len(names))
	for i := range seps {
		seps[i] = strings.Repeat("-", widths[i])
	}
	io.WriteString(w, strings.Join(seps, "-+-")+"\n")
	for _, r := range shown {
		line(r)
	}
	if len(shown) < len(rows) {
		fmt.Fprintf(w, "... %d more rows\n", len(rows)-len(shown))
	}
}
