package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// Output formats of query results.
const (
	formatTable = "table"
	formatCSV   = "csv"
	formatJSON  = "json"
	formatArrow = "arrow"
)

// recordStream yields owned records, then (nil, io.EOF): a
// vector.Operator, or a Flight reader wrapped by readerStream.
type recordStream interface {
	Schema() *arrow.Schema
	Next(ctx context.Context) (arrow.Record, error)
}

// readerStream adapts an array.RecordReader (records borrowed until the
// next call) to recordStream.
type readerStream struct{ r array.RecordReader }

func (s readerStream) Schema() *arrow.Schema { return s.r.Schema() }

func (s readerStream) Next(context.Context) (arrow.Record, error) {
	if s.r.Next() {
		rec := s.r.Record()
		rec.Retain()
		return rec, nil
	}
	if err := s.r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return nil, io.EOF
}

// writeResult writes every record of src to w in format. maxRows bounds
// the rows of the table format (0: all); the others write everything.
func writeResult(ctx context.Context, w io.Writer, format string, src recordStream, maxRows int) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case formatTable:
		err = writeTable(ctx, bw, src, maxRows)
	case formatCSV:
		err = writeCSV(ctx, bw, src)
	case formatJSON:
		err = writeJSONLines(ctx, bw, src)
	case formatArrow:
		err = writeArrowIPC(ctx, bw, src)
	default:
		err = fmt.Errorf("unknown output format %q", format)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// each calls f with every record of src (released after f).
func each(ctx context.Context, src recordStream, f func(arrow.Record) error) error {
	for {
		rec, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = f(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
}

// writeTable prints an aligned table with a border, as Spark's show()
// does: numbers right-aligned, NULL for nulls, and a row count.
func writeTable(ctx context.Context, w io.Writer, src recordStream, maxRows int) error {
	fields := src.Schema().Fields()
	widths := make([]int, len(fields))
	numeric := make([]bool, len(fields))
	for i, f := range fields {
		widths[i] = displayWidth(f.Name)
		numeric[i] = arrow.IsInteger(f.Type.ID()) || arrow.IsFloating(f.Type.ID()) || arrow.IsDecimal(f.Type.ID())
	}
	var rows [][]string
	total := 0
	err := each(ctx, src, func(rec arrow.Record) error {
		for r := 0; r < int(rec.NumRows()); r++ {
			total++
			if maxRows > 0 && len(rows) >= maxRows {
				continue
			}
			row := make([]string, len(fields))
			for c := range fields {
				row[c] = controlEscaper.Replace(cellText(rec.Column(c), r))
				widths[c] = max(widths[c], displayWidth(row[c]))
			}
			rows = append(rows, row)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sep := "+"
	for _, wd := range widths {
		sep += strings.Repeat("-", wd+2) + "+"
	}
	line := func(cells []string, header bool) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			pad := strings.Repeat(" ", widths[i]-displayWidth(c))
			if numeric[i] && !header {
				b.WriteString(" " + pad + c + " |")
			} else {
				b.WriteString(" " + c + pad + " |")
			}
		}
		fmt.Fprintln(w, b.String())
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	fmt.Fprintln(w, sep)
	line(names, true)
	fmt.Fprintln(w, sep)
	for _, r := range rows {
		line(r, false)
	}
	fmt.Fprintln(w, sep)
	switch {
	case total > len(rows):
		fmt.Fprintf(w, "(%d rows, %d shown)\n", total, len(rows))
	case total == 1:
		fmt.Fprintln(w, "(1 row)")
	default:
		fmt.Fprintf(w, "(%d rows)\n", total)
	}
	return nil
}

// controlEscaper keeps a table cell on one line.
var controlEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

// displayWidth counts runes, close enough to terminal columns for the
// names and values a query returns.
func displayWidth(s string) int { return len([]rune(s)) }

// writeCSV writes a header line and one line per row; NULL is empty.
func writeCSV(ctx context.Context, w io.Writer, src recordStream) error {
	cw := csv.NewWriter(w)
	fields := src.Schema().Fields()
	header := make([]string, len(fields))
	for i, f := range fields {
		header[i] = f.Name
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	err := each(ctx, src, func(rec arrow.Record) error {
		row := make([]string, len(fields))
		for r := 0; r < int(rec.NumRows()); r++ {
			for c := range fields {
				if rec.Column(c).IsNull(r) {
					row[c] = ""
				} else {
					row[c] = cellText(rec.Column(c), r)
				}
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
		return nil
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return err
}

// writeJSONLines writes one JSON object per row, keys in column order.
func writeJSONLines(ctx context.Context, w io.Writer, src recordStream) error {
	fields := src.Schema().Fields()
	keys := make([][]byte, len(fields))
	for i, f := range fields {
		keys[i], _ = json.Marshal(f.Name)
	}
	return each(ctx, src, func(rec arrow.Record) error {
		for r := 0; r < int(rec.NumRows()); r++ {
			var b []byte
			b = append(b, '{')
			for c := range fields {
				if c > 0 {
					b = append(b, ',')
				}
				b = append(b, keys[c]...)
				b = append(b, ':')
				v, err := json.Marshal(jsonValue(rec.Column(c), r))
				if err != nil {
					return err
				}
				b = append(b, v...)
			}
			b = append(b, '}', '\n')
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeArrowIPC writes the Arrow IPC stream format.
func writeArrowIPC(ctx context.Context, w io.Writer, src recordStream) error {
	iw := ipc.NewWriter(w, ipc.WithSchema(src.Schema()))
	err := each(ctx, src, iw.Write)
	if cerr := iw.Close(); err == nil {
		err = cerr
	}
	return err
}

// cellText renders one value for people: strings unquoted, timestamps as
// "2006-01-02 15:04:05[.ffffff]" in UTC, NULL for nulls.
func cellText(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return "NULL"
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Timestamp:
		return formatTime(timestampTime(a, i))
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Float64:
		return formatFloat(a.Value(i))
	case *array.Float32:
		return formatFloat(float64(a.Value(i)))
	case *array.Struct:
		parts := make([]string, a.NumField())
		for f := range parts {
			parts[f] = cellText(a.Field(f), i)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		parts := make([]string, 0, end-start)
		for j := start; j < end; j++ {
			parts = append(parts, cellText(vals, int(j)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *array.Dictionary:
		return cellText(a.Dictionary(), a.GetValueIndex(i))
	}
	return arr.ValueStr(i)
}

func timestampTime(a *array.Timestamp, i int) time.Time {
	toTime, err := a.DataType().(*arrow.TimestampType).GetToTimeFunc()
	if err != nil {
		return time.UnixMicro(int64(a.Value(i))).UTC()
	}
	return toTime(a.Value(i)) // in the zone of its type: the server labels results with the session's zone
}

func formatTime(t time.Time) string { return t.Format("2006-01-02 15:04:05.999999") }

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// jsonValue is a value as encoding/json should render it: numbers,
// strings, booleans, nested objects and arrays, null; timestamps as
// RFC 3339 strings, non-finite floats as strings.
func jsonValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int8:
		return a.Value(i)
	case *array.Int16:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Uint8:
		return a.Value(i)
	case *array.Uint16:
		return a.Value(i)
	case *array.Uint32:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Float32, *array.Float64:
		f, _ := strconv.ParseFloat(cellText(arr, i), 64)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return cellText(arr, i)
		}
		return f
	case *array.String, *array.LargeString:
		return cellText(arr, i)
	case *array.Timestamp:
		return timestampTime(a, i).Format(time.RFC3339Nano)
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		obj := make(orderedObject, a.NumField())
		for f := range obj {
			obj[f] = keyValue{st.Field(f).Name, jsonValue(a.Field(f), i)}
		}
		return obj
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, jsonValue(a.ListValues(), int(j)))
		}
		return out
	case *array.Dictionary:
		return jsonValue(a.Dictionary(), a.GetValueIndex(i))
	}
	return cellText(arr, i)
}

type keyValue struct {
	key   string
	value any
}

// orderedObject marshals as a JSON object with its keys in order.
type orderedObject []keyValue

func (o orderedObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(kv.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(kv.value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
