package difftest

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// fixedNow is current_timestamp() in every generated query.
var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Engine runs queries over a set of generated tables in the engine.
type Engine struct {
	mem    *memory.CheckedAllocator
	cat    *plan.MemoryCatalog
	tables []*plan.MemTable
}

// NewEngine loads tables into a memory catalog.
func NewEngine(tables []*Table) (*Engine, error) {
	e := &Engine{mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), cat: plan.NewMemoryCatalog()}
	for _, t := range tables {
		recs, schema, err := t.Records(e.mem)
		if err != nil {
			e.Close()
			return nil, err
		}
		mt, err := plan.NewMemTable(schema, recs...)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		e.tables = append(e.tables, mt)
		e.cat.Register(t.Name, mt)
	}
	return e, nil
}

// Close releases the tables.
func (e *Engine) Close() {
	for _, t := range e.tables {
		t.Release()
	}
	e.tables = nil
}

// Result is a query's answer: its rows in canonical text (in order), or
// the error it raised.
type Result struct {
	Rows []string
	Err  error
	// Panic is set when the engine panicked (always a finding).
	Panic string
	// Leak is set when the query's operators did not return their memory.
	Leak string
}

func (r Result) String() string {
	switch {
	case r.Panic != "":
		return "PANIC: " + r.Panic
	case r.Err != nil:
		return "ERROR: " + r.Err.Error()
	}
	if len(r.Rows) == 0 {
		return "(no rows)"
	}
	return strings.Join(r.Rows, "\n")
}

// Run runs text, analyzed and optimized when optimize is set, else only
// analyzed.
func (e *Engine) Run(ctx context.Context, text string, optimize bool) (res Result) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer func() {
		if p := recover(); p != nil {
			res = Result{Panic: fmt.Sprintf("%v\n%s", p, firstLines(string(debug.Stack()), 30))}
		}
	}()
	rows, err := e.run(ctx, mem, text, optimize)
	res = Result{Rows: rows, Err: err}
	if n := mem.CurrentAlloc(); n != 0 {
		res.Leak = fmt.Sprintf("%d bytes not released after the query", n)
	}
	return res
}

func (e *Engine) run(ctx context.Context, mem memory.Allocator, text string, optimize bool) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	n, err := plan.AnalyzeSQL(text, e.cat)
	if err != nil {
		return nil, err
	}
	if optimize {
		if n, err = plan.Optimize(n); err != nil {
			return nil, err
		}
	}
	op, err := plan.Execute(ctx, mem, n, &plan.Env{BatchTimestamp: fixedNow})
	if err != nil {
		return nil, err
	}
	recs, err := plan.DrainAndClose(ctx, op)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if err != nil {
		return nil, err
	}
	var rows []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			cells := make([]string, r.NumCols())
			for c := range cells {
				col := r.Column(c)
				cells[c] = Canonical(vector.ValueAt(col, i), vector.Unwrap(col.DataType()))
			}
			rows = append(rows, strings.Join(cells, " | "))
		}
	}
	return rows, nil
}

// Canonical renders an engine value for comparison: -0.0 as 0, every NaN
// alike, decimals at their scale, timestamps and dates in ISO form.
func Canonical(v any, dt arrow.DataType) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		if dt.ID() == arrow.FLOAT32 {
			return CanonicalFloat(float64(float32(x)))
		}
		return CanonicalFloat(x)
	case float32:
		return CanonicalFloat(float64(x))
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return strconv.Quote(x)
	case decimal128.Num:
		return CanonicalDecimal(x.ToString(dt.(*arrow.Decimal128Type).Scale))
	case arrow.Timestamp:
		return CanonicalTime(time.UnixMicro(int64(x)).UTC())
	case arrow.Date32:
		return x.ToTime().Format("2006-01-02")
	}
	return fmt.Sprintf("%v", v)
}

// CanonicalFloat renders a double: -0.0 as 0, NaN and the infinities by
// name, others in the shortest form that round-trips.
func CanonicalFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// CanonicalDecimal drops trailing zeros of a decimal's fraction, so that
// DECIMAL(10,2) 1.50 and DECIMAL(12,4) 1.5000 compare equal (the
// dialects type decimal arithmetic differently; values are what count).
func CanonicalDecimal(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return "dec:" + s
}

// CanonicalTime renders a timestamp.
func CanonicalTime(t time.Time) string { return t.Format("2006-01-02 15:04:05.999999") }

// sameRows compares two answers as multisets (or as lists when ordered).
func sameRows(a, b []string, ordered bool) bool {
	if len(a) != len(b) {
		return false
	}
	if !ordered {
		a = sorted(a)
		b = sorted(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sorted(rows []string) []string {
	out := append([]string(nil), rows...)
	sort.Strings(out)
	return out
}

// distinct returns the distinct rows.
func distinct(rows []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
