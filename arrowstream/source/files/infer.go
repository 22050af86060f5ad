package files

import (
	"bufio"
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/csv"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// jsonInferLines is how many lines of the first files JSON inference reads.
const jsonInferLines = 1000

// inferSchema derives a schema from the first files (Spark infers from the
// files present when the query starts; it must be given when there are
// none).
func inferSchema(o Options, files []fileInfo) (*arrow.Schema, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("files: unable to infer schema for %s at %s: no files yet; it must be specified manually", o.Format, o.Path)
	}
	switch o.Format {
	case Parquet, Arrow:
		c, err := openColumnar(context.Background(), memory.DefaultAllocator, o.Format, files[0].Path, nil)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		// Reader annotations (PARQUET:field_id) are not part of the data.
		return plainSchema(c.Schema()), nil
	case CSV:
		return inferCSV(o, files[0].Path)
	case JSON:
		return inferJSON(files)
	}
	return nil, fmt.Errorf("files: unknown format %s", o.Format)
}

// firstLines returns up to n lines of path.
func firstLines(path string, n int) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	defer f.Close()
	var out [][]byte
	br := bufio.NewReader(f)
	for len(out) < n {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimRight(line, "\r\n"); len(t) > 0 {
			out = append(out, t)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("files: read %s: %w", path, err)
		}
	}
	return out, nil
}

// inferCSV names the columns from the header (or _c0, _c1, ... as Spark)
// and types them as strings, or, with inferSchema, as arrow's inferring
// reader types the first data line (mapped onto the engine's types).
func inferCSV(o Options, path string) (*arrow.Schema, error) {
	lines, err := firstLines(path, 2)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("files: unable to infer schema for csv from %s: the file is empty", path)
	}
	rd := stdcsv.NewReader(bytes.NewReader(lines[0]))
	rd.Comma = o.Sep
	first, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("files: %s line 1: %w", path, err)
	}
	names := make([]string, len(first))
	for i := range first {
		names[i] = "_c" + strconv.Itoa(i)
		if o.Header && first[i] != "" {
			names[i] = first[i]
		}
	}
	types := make([]arrow.DataType, len(names))
	for i := range types {
		types[i] = vector.String
	}
	sample := lines[0]
	if o.Header {
		sample = nil
		if len(lines) > 1 {
			sample = lines[1]
		}
	}
	if o.InferSchema && sample != nil {
		if inferred, err := inferCSVTypes(o, len(names), sample); err == nil {
			types = inferred
		}
	}
	fields := make([]arrow.Field, len(names))
	for i := range names {
		fields[i] = arrow.Field{Name: names[i], Type: types[i], Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

// inferCSVTypes types one data line with arrow's inferring reader.
func inferCSVTypes(o Options, n int, line []byte) (types []arrow.DataType, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	// arrow's inferring reader types the columns its header names: give it
	// a header of placeholder names.
	var text bytes.Buffer
	for i := 0; i < n; i++ {
		if i > 0 {
			text.WriteRune(o.Sep)
		}
		text.WriteString("c" + strconv.Itoa(i))
	}
	text.WriteByte('\n')
	text.Write(line)
	r := csv.NewInferringReader(&text, csv.WithHeader(true), csv.WithComma(o.Sep), csv.WithNullReader(true, o.NullValue))
	defer r.Release()
	if !r.Next() {
		return nil, fmt.Errorf("no row: %v", r.Err())
	}
	s := r.Schema()
	if s.NumFields() != n {
		return nil, fmt.Errorf("%d fields", s.NumFields())
	}
	types = make([]arrow.DataType, n)
	for i, f := range s.Fields() {
		types[i] = engineType(f.Type)
	}
	return types, nil
}

// engineType maps an inferred arrow type onto the engine's types.
func engineType(dt arrow.DataType) arrow.DataType {
	switch dt.ID() {
	case arrow.INT64:
		return vector.Int64
	case arrow.FLOAT64:
		return vector.Float64
	case arrow.BOOL:
		return vector.Boolean
	case arrow.DATE32:
		return vector.Date
	case arrow.TIMESTAMP:
		return vector.Timestamp
	}
	return vector.String
}

// inferJSON types the top-level fields of the first lines: integers as
// bigint (widened to double when a fraction appears), booleans, strings;
// fields sorted by name, as Spark's inference. Nested values need a user
// schema.
func inferJSON(files []fileInfo) (*arrow.Schema, error) {
	types := map[string]arrow.DataType{}
	read := 0
	for _, fi := range files {
		lines, err := firstLines(fi.Path, jsonInferLines-read)
		if err != nil {
			return nil, err
		}
		for _, line := range lines {
			read++
			d := json.NewDecoder(bytes.NewReader(line))
			d.UseNumber()
			var obj map[string]any
			if d.Decode(&obj) != nil {
				continue // malformed lines are the mode's business, not inference's
			}
			for k, v := range obj {
				t, err := jsonType(v)
				if err != nil {
					return nil, fmt.Errorf("files: %s: field %s: %w", fi.Path, k, err)
				}
				if t != nil {
					types[k] = widen(types[k], t)
				}
			}
		}
		if read >= jsonInferLines {
			break
		}
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("files: unable to infer schema for json at %s: no JSON object in the first lines", files[0].Path)
	}
	names := make([]string, 0, len(types))
	for k := range types {
		names = append(names, k)
	}
	sort.Strings(names)
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: types[n], Nullable: true}
	}
	return arrow.NewSchema(fields, nil), nil
}

func jsonType(v any) (arrow.DataType, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return vector.Boolean, nil
	case string:
		return vector.String, nil
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return vector.Int64, nil
		}
		return vector.Float64, nil
	}
	return nil, fmt.Errorf("nested JSON values are not inferred; give a schema")
}

// widen merges two inferred types: bigint and double give double, any
// other conflict gives string.
func widen(a, b arrow.DataType) arrow.DataType {
	switch {
	case a == nil || arrow.TypeEqual(a, b):
		return b
	case (a.ID() == arrow.INT64 && b.ID() == arrow.FLOAT64) || (a.ID() == arrow.FLOAT64 && b.ID() == arrow.INT64):
		return vector.Float64
	}
	return vector.String
}
