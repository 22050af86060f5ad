package plan_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var fuzzOptions = func() []plan.Options {
	kolkata, err := plan.LoadTimeZone("Asia/Kolkata")
	if err != nil {
		panic(err)
	}
	return []plan.Options{plan.DefaultOptions(), {ANSI: false}, {ANSI: true, TimeZone: kolkata}}
}()

// FuzzAnalyze feeds parsed SQL to the analyzer, the optimizer, the
// streaming checks, EXPLAIN and (for batch plans over the empty test
// tables) execution: none may panic, whatever the input.
func FuzzAnalyze(f *testing.F) {
	files, _ := filepath.Glob("testdata/sqllogic/*.slt")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "SELECT") || strings.HasPrefix(line, "WITH") {
				f.Add(line)
			}
		}
	}
	for _, q := range analysisErrors {
		f.Add(q)
	}
	for _, c := range streamCases {
		f.Add(c.sql)
	}
	f.Add(benchQuery)
	cat := fuzzCatalog(f)
	f.Fuzz(func(t *testing.T, q string) {
		stmt, err := sql.Parse(q)
		if err != nil {
			return
		}
		// The session options vary with the input: ANSI, legacy, and a
		// non-UTC time zone.
		a, err := plan.AnalyzeWith(stmt, cat, fuzzOptions[len(q)%len(fuzzOptions)])
		if err != nil {
			return
		}
		var n plan.Node
		switch s := a.(type) {
		case *plan.QueryStatement:
			n = s.Plan
		case *plan.ExplainStatement:
			_, _ = plan.ExplainText(s)
			return
		default:
			return
		}
		_ = plan.Explain(n)
		opt, err := plan.Optimize(n)
		if err != nil {
			t.Fatalf("%q: optimize: %v", q, err)
		}
		if !sameColumns(opt.Schema(), n.Schema()) {
			t.Fatalf("%q: the optimizer changed the schema\n%s\n%s", q, n.Schema(), opt.Schema())
		}
		_ = plan.PhysicalPlan(opt)
		for _, m := range []plan.OutputMode{plan.Append, plan.Update, plan.Complete} {
			_ = plan.CheckStreaming(opt, m)
		}
		if n.IsStreaming() {
			return
		}
		// Differential check: when both the analyzed and the optimized plan
		// run, they give the same rows (as a multiset; plans with a limit
		// may pick different rows).
		a1, err1 := fuzzRun(t, opt)
		a2, err2 := fuzzRun(t, n)
		if err1 == nil && err2 == nil && !hasLimit(n) {
			sort.Strings(a1)
			sort.Strings(a2)
			if strings.Join(a1, "\n") != strings.Join(a2, "\n") {
				t.Fatalf("%q: optimized and analyzed plans differ\noptimized:\n%s\nanalyzed:\n%s\n%s\n%s",
					q, strings.Join(a1, "\n"), strings.Join(a2, "\n"), plan.Explain(opt), plan.Explain(n))
			}
		}
	})
}

var fuzzTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fuzzRun(t *testing.T, n plan.Node) ([]string, error) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	op, err := plan.Execute(context.Background(), mem, n, &plan.Env{BatchTimestamp: fuzzTime})
	if err != nil {
		return nil, err
	}
	recs, err := plan.DrainAndClose(context.Background(), op)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return resultRows(recs), err
}

func hasLimit(n plan.Node) bool {
	if _, ok := n.(*plan.Limit); ok {
		return true
	}
	for _, k := range n.Children() {
		if hasLimit(k) {
			return true
		}
	}
	return false
}

// sameColumns compares names, types and metadata; folding may make a
// column non-nullable.
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i, f := range a.Fields() {
		g := b.Field(i)
		if f.Name != g.Name || !arrow.TypeEqual(f.Type, g.Type) || !f.Metadata.Equal(g.Metadata) {
			return false
		}
	}
	return true
}

// fuzzCatalog is testCatalog with a few rows in t and u, so that execution
// runs the kernels.
func fuzzCatalog(f *testing.F) *plan.MemoryCatalog {
	cat := testCatalog(f)
	mem := memory.NewGoAllocator()
	add := func(name string, schema *arrow.Schema, rows []vt.Row) {
		rec := vt.BuildRecord(mem, schema, rows)
		defer rec.Release()
		mt, err := plan.NewMemTable(schema, rec)
		if err != nil {
			f.Fatal(err)
		}
		cat.Register(name, mt)
	}
	add("t", fieldsOf("a", vector.Int32, "b", vector.String, "c", vector.Float64),
		[]vt.Row{{1, "x y", 1.5}, {nil, "", -2.0}, {2147483647, nil, nil}, {-3, "x", 0.0}})
	add("u", fieldsOf("a", vector.Int32, "d", vector.String),
		[]vt.Row{{1, "d"}, {-3, nil}, {nil, "e"}})
	return cat
}
