package difftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Kind is a column type of a generated table.
type Kind int

// The column kinds: every type the engine reads from a table.
const (
	KBool Kind = iota
	KInt8
	KInt16
	KInt32
	KInt64
	KFloat32
	KFloat64
	KDecimal
	KString
	KDictString // a dictionary-encoded string column
	KDate
	KTimestamp
	numKinds
)

// class is the type family an expression belongs to; the generator only
// combines expressions of compatible classes.
type class int

const (
	cBool class = iota
	cInt
	cFloat
	cDec
	cStr
	cDate
	cTs
)

func (c class) numeric() bool { return c == cInt || c == cFloat || c == cDec }

// Column is a column of a generated table.
type Column struct {
	Name        string
	Kind        Kind
	Prec, Scale int32 // KDecimal only
	NotNull     bool
}

func (c Column) class() class {
	switch c.Kind {
	case KBool:
		return cBool
	case KInt8, KInt16, KInt32, KInt64:
		return cInt
	case KFloat32, KFloat64:
		return cFloat
	case KDecimal:
		return cDec
	case KString, KDictString:
		return cStr
	case KDate:
		return cDate
	}
	return cTs
}

// arrowType is the column's Arrow type.
func (c Column) arrowType() arrow.DataType {
	switch c.Kind {
	case KBool:
		return arrow.FixedWidthTypes.Boolean
	case KInt8:
		return arrow.PrimitiveTypes.Int8
	case KInt16:
		return arrow.PrimitiveTypes.Int16
	case KInt32:
		return arrow.PrimitiveTypes.Int32
	case KInt64:
		return arrow.PrimitiveTypes.Int64
	case KFloat32:
		return arrow.PrimitiveTypes.Float32
	case KFloat64:
		return arrow.PrimitiveTypes.Float64
	case KDecimal:
		return &arrow.Decimal128Type{Precision: c.Prec, Scale: c.Scale}
	case KString:
		return arrow.BinaryTypes.String
	case KDictString:
		return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	case KDate:
		return arrow.FixedWidthTypes.Date32
	}
	return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
}

// sqlType is the column's type in the dialect d.
func (c Column) sqlType(d Dialect) string {
	switch c.Kind {
	case KBool:
		return "BOOLEAN"
	case KInt8:
		return "TINYINT"
	case KInt16:
		return "SMALLINT"
	case KInt32:
		if d == DuckDB {
			return "INTEGER"
		}
		return "INT"
	case KInt64:
		return "BIGINT"
	case KFloat32:
		if d == DuckDB {
			return "REAL"
		}
		return "FLOAT"
	case KFloat64:
		return "DOUBLE"
	case KDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", c.Prec, c.Scale)
	case KString, KDictString:
		if d == DuckDB {
			return "VARCHAR"
		}
		return "STRING"
	case KDate:
		return "DATE"
	}
	return "TIMESTAMP"
}

// Value is one cell: nil for NULL, else bool, int64 (every integer kind),
// float64 (both float kinds; a float32 column holds float32-exact
// values), decimal128.Num, string, int32 days (date) or int64 µs
// (timestamp).
type Value = any

// Table is a generated table: its columns, its rows, and how its rows are
// split into record batches (so that batch boundaries are exercised).
type Table struct {
	Name    string
	Columns []Column
	Rows    [][]Value
	Batches []int // row counts of the records, summing to len(Rows)
}

// Dialect selects the SQL rendering.
type Dialect int

const (
	// Spark is the engine's dialect.
	Spark Dialect = iota
	// DuckDB is DuckDB's dialect, for the peer oracle.
	DuckDB
)

// genTable draws a table named name whose columns are prefixed with
// prefix.
func genTable(r *rand.Rand, name, prefix string, o Options) *Table {
	t := &Table{Name: name}
	ncol := 2 + r.IntN(5)
	for i := 0; i < ncol; i++ {
		c := Column{Name: fmt.Sprintf("%s%d", prefix, i), Kind: Kind(r.IntN(int(numKinds)))}
		if o.DuckDB && c.Kind == KFloat32 {
			// FLOAT arithmetic is computed and typed as DOUBLE by the
			// engine (a known deviation from Spark, docs/difftest.md);
			// keep it out of the DuckDB comparison
			c.Kind = KFloat64
		}
		if c.Kind == KDecimal {
			switch r.IntN(4) {
			case 0:
				c.Prec, c.Scale = 5, 2
			case 1:
				c.Prec, c.Scale = 10, 0
			case 2:
				c.Prec, c.Scale = 18, 4
			default:
				c.Prec, c.Scale = 38, 10
				if o.DuckDB {
					// arithmetic on DECIMAL(38,10) passes 38 digits: Spark
					// then cuts the scale (to 6 at least), DuckDB does not
					c.Prec, c.Scale = 18, 4
				}
			}
		}
		c.NotNull = r.IntN(5) == 0
		t.Columns = append(t.Columns, c)
	}
	nrow := r.IntN(12)
	if r.IntN(8) == 0 {
		nrow = 0
	} else if r.IntN(6) == 0 {
		nrow = 12 + r.IntN(40)
	}
	nullRate := []int{0, 5, 3, 2}[r.IntN(4)]
	for i := 0; i < nrow; i++ {
		row := make([]Value, ncol)
		for j, c := range t.Columns {
			if !c.NotNull && nullRate > 0 && r.IntN(nullRate) == 0 {
				continue
			}
			row[j] = genValue(r, c, o)
		}
		t.Rows = append(t.Rows, row)
	}
	for left := nrow; left > 0; {
		n := 1 + r.IntN(left)
		if r.IntN(2) == 0 {
			n = left
		}
		t.Batches = append(t.Batches, n)
		left -= n
	}
	return t
}

var (
	smallStrings = []string{"", "a", "A", "b", "ab", "abc", "aB", "x%y", "_", "é", "hello world", " a", "a ", "0", "1", "-1", "true", "2020-01-01"}
	epochDay     = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
)

// genValue draws a non-null value for c: mostly from a small pool (so that
// joins and groups meet equal values), sometimes an extreme.
func genValue(r *rand.Rand, c Column, o Options) Value {
	switch c.Kind {
	case KBool:
		return r.IntN(2) == 0
	case KInt8:
		return pickInt(r, math.MinInt8, math.MaxInt8)
	case KInt16:
		return pickInt(r, math.MinInt16, math.MaxInt16)
	case KInt32:
		return pickInt(r, math.MinInt32, math.MaxInt32)
	case KInt64:
		return pickInt(r, math.MinInt64, math.MaxInt64)
	case KFloat32, KFloat64:
		var f float64
		switch r.IntN(12) {
		case 0:
			f = math.NaN()
		case 1:
			f = math.Inf(1 - 2*r.IntN(2))
		case 2:
			f = math.Copysign(0, -1)
		case 3:
			if c.Kind == KFloat32 {
				f = math.MaxFloat32
			} else {
				f = math.MaxFloat64
			}
			f *= float64(1 - 2*r.IntN(2))
		case 4:
			f = math.SmallestNonzeroFloat64
			if c.Kind == KFloat32 {
				f = math.SmallestNonzeroFloat32
			}
		default:
			f = float64(r.IntN(11)-5) / float64(1+r.IntN(4))
		}
		if o.DuckDB && (math.IsNaN(f) || math.IsInf(f, 0)) {
			f = 1.5
		}
		if c.Kind == KFloat32 {
			f = float64(float32(f))
		}
		return f
	case KDecimal:
		var s string
		switch r.IntN(8) {
		case 0: // the largest value of the type, either sign
			s = strings.Repeat("9", int(c.Prec))
			if r.IntN(2) == 0 {
				s = "-" + s
			}
		default:
			s = strconv.Itoa(r.IntN(2001) - 1000)
		}
		n, err := decimal128.FromString(s, 38, 0)
		if err != nil || len(strings.TrimLeft(s, "-")) > int(c.Prec) {
			n = decimal128.FromI64(int64(r.IntN(100)))
		}
		return n
	case KString, KDictString:
		switch r.IntN(10) {
		case 0:
			return strings.Repeat("long-", 20+r.IntN(30))
		default:
			return smallStrings[r.IntN(len(smallStrings))]
		}
	case KDate:
		days := []int32{0, 1, -1, 18262, 18263, 19000, -25567, 47482}
		return days[r.IntN(len(days))]
	}
	us := []int64{0, 1, -1, 1577836800000000, 1577836800000001, 1577840400000000, 1640995200123456, -2208988800000000, 4102444800000000}
	return us[r.IntN(len(us))]
}

func pickInt(r *rand.Rand, lo, hi int64) int64 {
	switch r.IntN(10) {
	case 0:
		return lo
	case 1:
		return hi
	case 2:
		return lo + 1
	default:
		return int64(r.IntN(11) - 5)
	}
}

// Record builds the table's records on mem (the caller releases them).
func (t *Table) Records(mem memory.Allocator) ([]arrow.Record, *arrow.Schema, error) {
	fields := make([]arrow.Field, len(t.Columns))
	for i, c := range t.Columns {
		fields[i] = arrow.Field{Name: c.Name, Type: c.arrowType(), Nullable: !c.NotNull}
	}
	schema := arrow.NewSchema(fields, nil)
	var recs []arrow.Record
	start := 0
	for _, n := range t.Batches {
		rec, err := t.record(mem, schema, t.Rows[start:start+n])
		if err != nil {
			for _, r := range recs {
				r.Release()
			}
			return nil, nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		recs = append(recs, rec)
		start += n
	}
	return recs, schema, nil
}

func (t *Table) record(mem memory.Allocator, schema *arrow.Schema, rows [][]Value) (arrow.Record, error) {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for j, c := range t.Columns {
		fb := b.Field(j)
		for _, row := range rows {
			v := row[j]
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch c.Kind {
			case KBool:
				fb.(*array.BooleanBuilder).Append(v.(bool))
			case KInt8:
				fb.(*array.Int8Builder).Append(int8(v.(int64)))
			case KInt16:
				fb.(*array.Int16Builder).Append(int16(v.(int64)))
			case KInt32:
				fb.(*array.Int32Builder).Append(int32(v.(int64)))
			case KInt64:
				fb.(*array.Int64Builder).Append(v.(int64))
			case KFloat32:
				fb.(*array.Float32Builder).Append(float32(v.(float64)))
			case KFloat64:
				fb.(*array.Float64Builder).Append(v.(float64))
			case KDecimal:
				n := v.(decimal128.Num)
				fb.(*array.Decimal128Builder).Append(n)
			case KString:
				fb.(*array.StringBuilder).Append(v.(string))
			case KDictString:
				if err := fb.(*array.BinaryDictionaryBuilder).AppendString(v.(string)); err != nil {
					return nil, err
				}
			case KDate:
				fb.(*array.Date32Builder).Append(arrow.Date32(v.(int32)))
			case KTimestamp:
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(v.(int64)))
			}
		}
	}
	return b.NewRecord(), nil
}

// literal renders a non-null value of kind c as a SQL literal of the
// column's type in dialect d.
func literal(v Value, c Column, d Dialect) string {
	if v == nil {
		return "NULL"
	}
	typed := func(s string) string { return fmt.Sprintf("CAST(%s AS %s)", s, c.sqlType(d)) }
	switch c.Kind {
	case KBool:
		if v.(bool) {
			return "TRUE"
		}
		return "FALSE"
	case KInt8, KInt16, KInt32, KInt64:
		return typed("'" + strconv.FormatInt(v.(int64), 10) + "'")
	case KFloat32, KFloat64:
		return typed("'" + floatText(v.(float64)) + "'")
	case KDecimal:
		return typed("'" + decText(v.(decimal128.Num), c.Scale) + "'")
	case KString, KDictString:
		return quote(v.(string))
	case KDate:
		return "DATE '" + epochDay.AddDate(0, 0, int(v.(int32))).Format("2006-01-02") + "'"
	}
	return "TIMESTAMP '" + time.UnixMicro(v.(int64)).UTC().Format("2006-01-02 15:04:05.999999") + "'"
}

func floatText(f float64) string {
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

// decText renders an unscaled decimal with scale digits after the point.
func decText(n decimal128.Num, scale int32) string {
	return n.ToString(scale)
}

// quote renders s as a string literal both dialects read the same way
// (the generator's strings hold no quote or backslash).
func quote(s string) string { return "'" + s + "'" }

// CreateSQL renders the table as CREATE TABLE and INSERT statements in
// dialect d (for reproducers and for loading DuckDB).
func (t *Table) CreateSQL(d Dialect) string {
	var b strings.Builder
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = c.Name + " " + c.sqlType(d)
		if c.NotNull {
			cols[i] += " NOT NULL"
		}
	}
	fmt.Fprintf(&b, "CREATE TABLE %s (%s);\n", t.Name, strings.Join(cols, ", "))
	if len(t.Rows) > 0 {
		rows := make([]string, len(t.Rows))
		for i, row := range t.Rows {
			cells := make([]string, len(row))
			for j, v := range row {
				cells[j] = literal(v, t.Columns[j], d)
			}
			rows[i] = "(" + strings.Join(cells, ", ") + ")"
		}
		fmt.Fprintf(&b, "INSERT INTO %s VALUES\n  %s;\n", t.Name, strings.Join(rows, ",\n  "))
	}
	return b.String()
}

// SLT renders the table as a `table` directive of plan/testdata/sqllogic
// (whose loader knows INT, BIGINT, DOUBLE, DECIMAL, STRING, BOOLEAN, DATE
// and TIMESTAMP: narrower kinds are widened, which a reproducer notes).
func (t *Table) SLT() string {
	var b strings.Builder
	b.WriteString("table " + t.Name)
	for _, c := range t.Columns {
		typ := map[Kind]string{KBool: "BOOLEAN", KInt8: "INT", KInt16: "INT", KInt32: "INT", KInt64: "BIGINT",
			KFloat32: "DOUBLE", KFloat64: "DOUBLE", KString: "STRING", KDictString: "STRING", KDate: "DATE", KTimestamp: "TIMESTAMP"}[c.Kind]
		if c.Kind == KDecimal {
			typ = fmt.Sprintf("DECIMAL(%d,%d)", c.Prec, c.Scale)
		}
		b.WriteString(" " + c.Name + ":" + typ)
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		cells := make([]string, len(row))
		for j, v := range row {
			cells[j] = sltCell(v, t.Columns[j])
		}
		b.WriteString(strings.Join(cells, " | ") + "\n")
	}
	return b.String()
}

func sltCell(v Value, c Column) string {
	if v == nil {
		return "NULL"
	}
	switch c.Kind {
	case KBool:
		return strconv.FormatBool(v.(bool))
	case KInt8, KInt16, KInt32, KInt64:
		return strconv.FormatInt(v.(int64), 10)
	case KFloat32, KFloat64:
		return floatText(v.(float64))
	case KDecimal:
		return decText(v.(decimal128.Num), c.Scale)
	case KString, KDictString:
		if v.(string) == "" {
			return "''"
		}
		return v.(string)
	case KDate:
		return epochDay.AddDate(0, 0, int(v.(int32))).Format("2006-01-02")
	}
	return time.UnixMicro(v.(int64)).UTC().Format("2006-01-02 15:04:05")
}
