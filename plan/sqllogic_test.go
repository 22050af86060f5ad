package plan_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The SQL logic tests: plan/testdata/sqllogic/*.slt. A file defines
// static tables and then queries with their expected results, which were
// worked out from Spark's documented semantics (not copied from this
// engine's output). Directives:
//
//	stream NAME COL:TYPE ...    a streaming source (schema only)
//	table NAME COL:TYPE ...     a table; rows follow, cells separated by |,
//	                            NULL for null, '' for the empty string;
//	                            a blank line ends it
//	query [ordered]             a query, then ----, then the expected rows
//	                            (compared as a multiset unless ordered)
//	error SUBSTRING             a query that must fail with SUBSTRING in
//	                            its error (analysis or execution)
//	set KEY VALUE               a setting (spark.sql.ansi.enabled,
//	                            spark.sql.session.timeZone) for the
//	                            queries after it in the file
//
// Lines starting with # are comments. Every query runs twice, as
// analyzed and as optimized, on a checked allocator.

type sltCase struct {
	conf      map[string]string // settings of the preceding set directives
	file, sql string
	line      int
	ordered   bool
	wantErr   string
	want      []string
}

type sltFile struct {
	tables  map[string]*sltTable
	streams map[string]*arrow.Schema
	cases   []sltCase
}

type sltTable struct {
	schema *arrow.Schema
	rows   [][]string
}

func parseSLT(t *testing.T, path string) *sltFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	out := &sltFile{tables: map[string]*sltTable{}, streams: map[string]*arrow.Schema{}}
	base := filepath.Base(path)
	conf := map[string]string{}
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		words := strings.Fields(l)
		switch words[0] {
		case "stream":
			var fields []arrow.Field
			for _, c := range words[2:] {
				name, typ, _ := strings.Cut(c, ":")
				tn, err := sql.ParseType(typ)
				if err != nil {
					t.Fatalf("%s:%d: %v", base, i+1, err)
				}
				fields = append(fields, arrow.Field{Name: name, Type: sltType(t, tn), Nullable: true})
			}
			out.streams[words[1]] = arrow.NewSchema(fields, nil)
		case "table":
			if len(words) < 3 {
				t.Fatalf("%s:%d: table needs a name and columns", base, i+1)
			}
			var fields []arrow.Field
			for _, c := range words[2:] {
				name, typ, ok := strings.Cut(c, ":")
				if !ok {
					t.Fatalf("%s:%d: column %q needs a type", base, i+1, c)
				}
				tn, err := sql.ParseType(typ)
				if err != nil {
					t.Fatalf("%s:%d: %v", base, i+1, err)
				}
				fields = append(fields, arrow.Field{Name: name, Type: sltType(t, tn), Nullable: true})
			}
			tb := &sltTable{schema: arrow.NewSchema(fields, nil)}
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				tb.rows = append(tb.rows, splitCells(lines[i]))
			}
			out.tables[words[1]] = tb
		case "set":
			if len(words) != 3 {
				t.Fatalf("%s:%d: set needs a key and a value", base, i+1)
			}
			conf = maps.Clone(conf)
			conf[words[1]] = words[2]
		case "query", "error":
			c := sltCase{file: base, line: i + 1, conf: conf}
			if words[0] == "error" {
				c.wantErr = strings.TrimSpace(strings.TrimPrefix(l, "error"))
			} else {
				c.ordered = len(words) > 1 && words[1] == "ordered"
			}
			var q []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "----" && strings.TrimSpace(lines[i]) != ""; i++ {
				q = append(q, lines[i])
			}
			c.sql = strings.Join(q, "\n")
			if c.wantErr == "" {
				if i >= len(lines) || strings.TrimSpace(lines[i]) != "----" {
					t.Fatalf("%s:%d: query without ----", base, c.line)
				}
				for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
					c.want = append(c.want, normalizeRow(lines[i]))
				}
			}
			out.cases = append(out.cases, c)
		default:
			t.Fatalf("%s:%d: unknown directive %q", base, i+1, words[0])
		}
	}
	return out
}

func sltType(t *testing.T, tn *sql.TypeName) arrow.DataType {
	switch tn.Name {
	case "INT":
		return vector.Int32
	case "BIGINT":
		return vector.Int64
	case "DOUBLE":
		return vector.Float64
	case "FLOAT":
		return vector.Float32
	case "TIMESTAMP_NTZ":
		return vector.TimestampNTZ
	case "STRING":
		return vector.String
	case "BOOLEAN":
		return vector.Boolean
	case "TIMESTAMP":
		return vector.Timestamp
	case "DATE":
		return vector.Date
	case "DECIMAL":
		return vector.Decimal(int32(tn.Params[0]), int32(tn.Params[1]))
	case "ARRAY":
		return vector.ListOf(sltType(t, tn.Elem))
	}
	t.Fatalf("unsupported table type %s", tn.Name)
	return nil
}

func splitCells(line string) []string {
	parts := strings.Split(line, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func normalizeRow(line string) string { return strings.Join(splitCells(line), " | ") }

// cellValue converts a table cell to a canonical Go value.
func cellValue(t *testing.T, s string, dt arrow.DataType) any {
	if s == "NULL" {
		return nil
	}
	if s == "''" {
		s = ""
	}
	var err error
	var v any
	switch dt.ID() {
	case arrow.INT32:
		var n int64
		n, err = strconv.ParseInt(s, 10, 32)
		v = int32(n)
	case arrow.INT64:
		v, err = strconv.ParseInt(s, 10, 64)
	case arrow.FLOAT64:
		v, err = strconv.ParseFloat(s, 64)
	case arrow.FLOAT32:
		v, err = strconv.ParseFloat(s, 32)
	case arrow.STRING:
		v = s
	case arrow.BOOL:
		v, err = strconv.ParseBool(s)
	case arrow.TIMESTAMP:
		var tm time.Time
		tm, err = time.Parse("2006-01-02 15:04:05", s)
		v = arrow.Timestamp(tm.UnixMicro())
	case arrow.DATE32:
		var tm time.Time
		tm, err = time.Parse("2006-01-02", s)
		v = arrow.Date32FromTime(tm)
	case arrow.DECIMAL128:
		d := dt.(*arrow.Decimal128Type)
		v, err = decimal128.FromString(s, d.Precision, d.Scale)
	case arrow.LIST:
		var elems []any
		body := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		if body != "" {
			for _, e := range strings.Split(body, ",") {
				elems = append(elems, cellValue(t, strings.TrimSpace(e), dt.(*arrow.ListType).Elem()))
			}
		}
		v = elems
	default:
		t.Fatalf("cell of type %s", dt)
	}
	if err != nil {
		t.Fatalf("cell %q of type %s: %v", s, vector.TypeName(dt), err)
	}
	return v
}

func (tb *sltTable) build(t *testing.T, mem memory.Allocator) *plan.MemTable {
	cols := make([]arrow.Array, tb.schema.NumFields())
	for c, f := range tb.schema.Fields() {
		b := array.NewBuilder(mem, f.Type)
		for _, r := range tb.rows {
			if len(r) != len(cols) {
				t.Fatalf("row %v has %d cells, want %d", r, len(r), len(cols))
			}
			if err := vector.AppendValue(b, cellValue(t, r[c], f.Type)); err != nil {
				t.Fatal(err)
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(tb.schema, cols, int64(len(tb.rows)))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	mt, err := plan.NewMemTable(tb.schema, rec)
	if err != nil {
		t.Fatal(err)
	}
	return mt
}

// formatCell renders a result value as the .slt files write it: Spark's
// display forms (doubles always with a fraction digit, timestamps as
// yyyy-MM-dd HH:mm:ss[.f]).
func formatCell(v any, dt arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		bits := 64
		if dt != nil && dt.ID() == arrow.FLOAT32 {
			bits = 32 // the shortest text that reads back as the float
		}
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		case x == math.Trunc(x) && math.Abs(x) < 1e15:
			return strconv.FormatFloat(x, 'f', 1, 64)
		}
		return strconv.FormatFloat(x, 'g', -1, bits)
	case string:
		if x == "" {
			return "''"
		}
		return x
	case arrow.Timestamp:
		return time.UnixMicro(int64(x)).UTC().Format("2006-01-02 15:04:05.999999")
	case arrow.Date32:
		return x.ToTime().Format("2006-01-02")
	case decimal128.Num:
		return x.ToString(dt.(*arrow.Decimal128Type).Scale)
	case vector.MapValue: // Spark's display form {k -> v, ...}
		mt, _ := dt.(*arrow.MapType)
		var kt, vt arrow.DataType
		if mt != nil {
			kt, vt = mt.KeyType(), mt.ItemType()
		}
		parts := make([]string, len(x.Keys))
		for i := range x.Keys {
			parts[i] = formatCell(x.Keys[i], kt) + " -> " + formatCell(x.Values[i], vt)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		var parts []string
		var elem arrow.DataType
		var fields []arrow.Field
		switch t := dt.(type) {
		case *arrow.ListType:
			elem = t.Elem()
		case *arrow.StructType:
			fields = t.Fields()
		}
		for i, e := range x {
			et := elem
			if fields != nil {
				et = fields[i].Type
			}
			parts = append(parts, formatCell(e, et))
		}
		if fields != nil {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func resultRows(recs []arrow.Record) []string {
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			cells := make([]string, r.NumCols())
			for c := range cells {
				col := r.Column(c)
				cells[c] = formatCell(vector.ValueAt(col, i), vector.Unwrap(col.DataType()))
			}
			out = append(out, strings.Join(cells, " | "))
		}
	}
	return out
}

// sltNow is current_timestamp() in the logic tests.
var sltNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func runSLTQuery(ctx context.Context, mem memory.Allocator, cat plan.Catalog, text string, conf map[string]string, optimize bool) ([]string, error) {
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), conf)
	if err != nil {
		return nil, err
	}
	n, err := plan.AnalyzeSQLWith(text, cat, opts)
	if err != nil {
		return nil, err
	}
	if optimize {
		if n, err = plan.Optimize(n); err != nil {
			return nil, err
		}
	}
	op, err := plan.Execute(ctx, mem, n, &plan.Env{BatchTimestamp: sltNow})
	if err != nil {
		return nil, err
	}
	recs, err := plan.DrainAndClose(ctx, op)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return resultRows(recs), nil
}

func TestSQLLogic(t *testing.T) {
	files, err := filepath.Glob("testdata/sqllogic/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .slt files: %v", err)
	}
	total := 0
	for _, path := range files {
		f := parseSLT(t, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			mem := poisonmem.New()
			cat := plan.NewMemoryCatalog()
			var tables []*plan.MemTable
			for name, tb := range f.tables {
				mt := tb.build(t, mem)
				tables = append(tables, mt)
				cat.Register(name, mt)
			}
			for name, s := range f.streams {
				cat.Register(name, &plan.SourceTable{TableSchema: s})
			}
			defer func() {
				for _, mt := range tables {
					mt.Release()
				}
				mem.AssertSize(t, 0)
			}()
			for _, c := range f.cases {
				total++
				for _, opt := range []bool{false, true} {
					got, err := runSLTQuery(context.Background(), mem, cat, c.sql, c.conf, opt)
					where := fmt.Sprintf("%s:%d (optimized %v)\n%s", c.file, c.line, opt, c.sql)
					if c.wantErr != "" {
						if err == nil {
							t.Errorf("%s\nsucceeded with %v, want error containing %q", where, got, c.wantErr)
						} else if !strings.Contains(err.Error(), c.wantErr) {
							t.Errorf("%s\nerror %q does not contain %q", where, err, c.wantErr)
						}
						continue
					}
					if err != nil {
						t.Errorf("%s\nerror: %v", where, err)
						continue
					}
					want := append([]string(nil), c.want...)
					if !c.ordered {
						sort.Strings(got)
						sort.Strings(want)
					}
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("%s\ngot:\n%s\nwant:\n%s", where, strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
				}
			}
		})
	}
	t.Logf("%d queries in %d files", total, len(files))
}
