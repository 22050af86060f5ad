package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// formatLine is the shell's line mode: one "column = value" line per
// column, a blank line between rows (sqlite's .mode line), for wide rows.
const formatLine = "line"

// writeLineMode writes every row of src in line mode.
func writeLineMode(ctx context.Context, w io.Writer, src recordStream) error {
	bw := bufio.NewWriter(w)
	fields := src.Schema().Fields()
	width := 0
	for _, f := range fields {
		width = max(width, displayWidth(f.Name))
	}
	first := true
	err := each(ctx, src, func(rec arrow.Record) error {
		for r := range int(rec.NumRows()) {
			if !first {
				bw.WriteByte('\n')
			}
			first = false
			for c, f := range fields {
				fmt.Fprintf(bw, "%s%s = %s\n", strings.Repeat(" ", width-displayWidth(f.Name)), f.Name,
					controlEscaper.Replace(cellText(rec.Column(c), r)))
			}
		}
		// Rows of a live subscription appear as they arrive.
		return bw.Flush()
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
