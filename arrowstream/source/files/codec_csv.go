package files

import (
	"bytes"
	stdcsv "encoding/csv"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/csv"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// csvCodec decodes CSV lines with arrow/csv.
type csvCodec struct {
	schema *arrow.Schema // the decoded columns (without the corrupt-record column)
	sep    rune
	nulls  []string
}

func newCSVCodec(schema *arrow.Schema, o Options) (c *csvCodec, err error) {
	c = &csvCodec{schema: schema, sep: o.Sep, nulls: []string{o.NullValue}}
	// arrow's reader panics on a type it cannot parse: find out now, with
	// the schema's name in the error, rather than at the first file.
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("files: csv cannot read schema %s: %v", schema, p)
		}
	}()
	csv.NewReader(bytes.NewReader(nil), schema).Release()
	return c, nil
}

func (c *csvCodec) decode(mem memory.Allocator, data []byte) ([]arrow.Record, error) {
	r := csv.NewReader(bytes.NewReader(data), c.schema, csv.WithAllocator(mem), csv.WithChunk(wholeChunk),
		csv.WithComma(c.sep), csv.WithNullReader(true, c.nulls...))
	return drainRecords(r)
}

// explain finds the first field of line that arrow cannot parse as its
// column's type, by decoding each field alone with the same reader.
func (c *csvCodec) explain(line []byte) string {
	rd := stdcsv.NewReader(bytes.NewReader(line))
	rd.Comma = c.sep
	fields, err := rd.Read()
	if err != nil {
		if pe, ok := err.(*stdcsv.ParseError); ok {
			return fmt.Sprintf(" char %d", pe.Column)
		}
		return ""
	}
	if len(fields) != c.schema.NumFields() {
		return fmt.Sprintf(" (%d fields, the schema has %d columns)", len(fields), c.schema.NumFields())
	}
	for i, v := range fields {
		var buf bytes.Buffer
		w := stdcsv.NewWriter(&buf)
		w.Comma = c.sep
		if w.Write([]string{v}) != nil {
			continue
		}
		w.Flush()
		one := &csvCodec{schema: arrow.NewSchema([]arrow.Field{c.schema.Field(i)}, nil), sep: c.sep, nulls: c.nulls}
		recs, err := safeDecode(memory.DefaultAllocator, one, buf.Bytes())
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			return fmt.Sprintf(" column %s (value %q)", c.schema.Field(i).Name, truncate(v, 40))
		}
	}
	return ""
}

// wholeChunk makes arrow's readers put all of their input (one chunk of
// lines) in one record while reading row by row: with chunk -1 the CSV
// reader would first materialise every row's fields (encoding/csv ReadAll).
const wholeChunk = 1 << 30
