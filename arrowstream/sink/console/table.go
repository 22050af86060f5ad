package console

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// table lays out rows as Spark's Dataset.show does: "+---+" rules without
// padding, cells right-aligned when truncating and left-aligned otherwise,
// columns at least 3 wide, "null" for nulls.
type table struct {
	truncate int
	header   []string
	rows     [][]string
}

func newTable(schema *arrow.Schema, truncate int) *table {
	t := &table{truncate: truncate}
	for _, f := range schema.Fields() {
		t.header = append(t.header, t.cut(f.Name))
	}
	return t
}

// cut applies the truncate rule (Spark's: keep truncate-3 characters and
// "...", or the first truncate characters when it is under 4) and keeps
// the cell on one line.
func (t *table) cut(s string) string {
	s = lineEscaper.Replace(s)
	if t.truncate <= 0 || utf8.RuneCountInString(s) <= t.truncate {
		return s
	}
	r := []rune(s)
	if t.truncate < 4 {
		return string(r[:t.truncate])
	}
	return string(r[:t.truncate-3]) + "..."
}

var lineEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

func (t *table) addRow(rec arrow.Record, r int) {
	row := make([]string, rec.NumCols())
	for c := range row {
		row[c] = t.cut(cell(rec.Column(c), r))
	}
	t.rows = append(t.rows, row)
}

// write renders the table; more says rows beyond the shown ones exist.
func (t *table) write(b *bytes.Buffer, more bool, numRows int) {
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = max(3, utf8.RuneCountInString(h))
	}
	for _, row := range t.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	sep := func() {
		b.WriteByte('+')
		for _, w := range widths {
			b.WriteString(strings.Repeat("-", w))
			b.WriteByte('+')
		}
		b.WriteByte('\n')
	}
	line := func(cells []string) {
		b.WriteByte('|')
		for i, c := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if t.truncate > 0 {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteByte('|')
		}
		b.WriteByte('\n')
	}
	sep()
	line(t.header)
	sep()
	for _, row := range t.rows {
		line(row)
	}
	sep()
	if more {
		noun := "rows"
		if numRows == 1 {
			noun = "row"
		}
		b.WriteString("only showing top " + strconv.Itoa(numRows) + " " + noun + "\n")
	}
}

// cell renders a value as Spark's show does: strings as they are,
// timestamps "yyyy-MM-dd HH:mm:ss[.ffffff]" (UTC), doubles with a ".0" when
// integral, binary as "[0A FF]", lists "[a, b]", structs "{a, b}". Strings
// are copied: the table keeps its cells after the batch is released.
func cell(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return "null"
	}
	switch a := arr.(type) {
	case *array.String:
		return strings.Clone(a.Value(i))
	case *array.LargeString:
		return strings.Clone(a.Value(i))
	case *array.Binary:
		return binaryText(a.Value(i))
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		return floatText(float64(a.Value(i)), 32)
	case *array.Float64:
		return floatText(a.Value(i), 64)
	case *array.Decimal128:
		return decimalText(a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Timestamp:
		toTime, err := a.DataType().(*arrow.TimestampType).GetToTimeFunc()
		if err != nil {
			return a.ValueStr(i)
		}
		return toTime(a.Value(i)).UTC().Format("2006-01-02 15:04:05.999999")
	case *array.Date32:
		return a.Value(i).ToTime().Format("2006-01-02")
	case *array.Duration:
		return (time.Duration(a.Value(i)) * time.Microsecond).String()
	case *array.Struct:
		parts := make([]string, a.NumField())
		for f := range parts {
			parts[f] = cell(a.Field(f), i)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case *array.List:
		start, end := a.ValueOffsets(i)
		parts := make([]string, 0, end-start)
		for j := start; j < end; j++ {
			parts = append(parts, cell(a.ListValues(), int(j)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *array.Dictionary:
		return cell(a.Dictionary(), a.GetValueIndex(i))
	}
	return arr.ValueStr(i)
}

func binaryText(v []byte) string {
	h := strings.ToUpper(hex.EncodeToString(v))
	parts := make([]string, 0, len(v))
	for j := 0; j < len(h); j += 2 {
		parts = append(parts, h[j:j+2])
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func floatText(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	// Java's Double.toString, which Spark's show uses: plain digits in
	// [1e-3, 1e7), else scientific "1.0E300"; always a fraction digit.
	if a := math.Abs(f); a != 0 && (a < 1e-3 || a >= 1e7) {
		m, e, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, bits), "e")
		if !strings.Contains(m, ".") {
			m += ".0"
		}
		exp, _ := strconv.Atoi(e)
		return m + "E" + strconv.Itoa(exp)
	}
	s := strconv.FormatFloat(f, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func decimalText(n decimal128.Num, scale int32) string { return n.ToString(scale) }
