package difftest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Options configure generation.
type Options struct {
	// DuckDB keeps to the subset of the dialect where Spark and DuckDB
	// agree (see docs/difftest.md): no NaN/Inf data, no division, no casts whose
	// rules differ, no Spark-only functions.
	DuckDB bool
	// NoDistinctAgg leaves count(DISTINCT ...) out.
	NoDistinctAgg bool
	// QueriesPerCase is how many queries each pair of tables gets (10 when
	// zero).
	QueriesPerCase int
}

// Case is a generated pair of tables and the queries over them.
type Case struct {
	Seed    uint64
	Tables  []*Table
	Queries []*Query
}

// Generate draws the case of seed.
func Generate(seed uint64, o Options) *Case {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &gen{r: r, o: o}
	c := &Case{Seed: seed, Tables: []*Table{genTable(r, "t0", "a", o), genTable(r, "t1", "b", o)}}
	n := o.QueriesPerCase
	if n == 0 {
		n = 10
	}
	for i := 0; i < n; i++ {
		c.Queries = append(c.Queries, g.query(c.Tables))
	}
	return c
}

// Oracle names.
const (
	OracleOptimizer = "optimizer"
	OracleTLPWhere  = "tlp-where"
	OracleTLPHaving = "tlp-having"
	OracleTLPAgg    = "tlp-aggregate"
	OracleTLPOuter  = "tlp-outer"
	OracleLeak      = "leak"
	OraclePanic     = "panic"
	OracleDuckDB    = "duckdb"
)

// Mismatch is a wrong answer found by an oracle, with what reproduces it.
type Mismatch struct {
	Oracle  string
	Seed    uint64
	Tables  []*Table
	Query   string // the query checked
	Other   string // the query or queries it was compared with ("" for the same query)
	Want    Result // the reference side (unoptimized, the partitions' union, DuckDB)
	Got     Result // the engine's side that disagrees
	Comment string
}

// Report renders m as a reproducer: the tables as CREATE/INSERT
// statements and in the sqllogic format, the queries and both answers.
func (m *Mismatch) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== MISMATCH oracle=%s seed=%d\n", m.Oracle, m.Seed)
	if m.Comment != "" {
		fmt.Fprintf(&b, "-- %s\n", m.Comment)
	}
	b.WriteString("-- tables (SQL):\n")
	for _, t := range m.Tables {
		b.WriteString(t.CreateSQL(Spark))
	}
	b.WriteString("-- tables (plan/testdata/sqllogic format; narrow kinds widened):\n")
	for _, t := range m.Tables {
		b.WriteString(t.SLT())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "-- query:\n%s;\n", m.Query)
	if m.Other != "" {
		fmt.Fprintf(&b, "-- compared with:\n%s;\n", m.Other)
	}
	fmt.Fprintf(&b, "-- reference answer:\n%s\n-- engine answer:\n%s\n", m.Want, m.Got)
	if m.Got.Leak != "" {
		fmt.Fprintf(&b, "-- leak: %s\n", m.Got.Leak)
	}
	return b.String()
}

// Stats counts what a run checked.
type Stats struct {
	Cases, Queries int
	Checked        map[string]int // comparisons made, per oracle
	Errored        int            // queries skipped because an engine side raised an error
	// OptimizedOnlyErrors counts queries whose optimized plan raised an
	// error that the analyzed plan did not (allowed; see checker.query).
	OptimizedOnlyErrors int
	Mismatches          int
}

func (s *Stats) add(o Stats) {
	s.Cases += o.Cases
	s.Queries += o.Queries
	s.Errored += o.Errored
	s.OptimizedOnlyErrors += o.OptimizedOnlyErrors
	s.Mismatches += o.Mismatches
	if s.Checked == nil {
		s.Checked = map[string]int{}
	}
	for k, v := range o.Checked {
		s.Checked[k] += v
	}
}

func (s Stats) String() string {
	var parts []string
	for _, k := range []string{OracleOptimizer, OracleTLPWhere, OracleTLPHaving, OracleTLPAgg, OracleTLPOuter, OracleDuckDB} {
		if s.Checked[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, s.Checked[k]))
		}
	}
	return fmt.Sprintf("cases=%d queries=%d checked{%s} errored=%d optimized-only-errors=%d mismatches=%d",
		s.Cases, s.Queries, strings.Join(parts, " "), s.Errored, s.OptimizedOnlyErrors, s.Mismatches)
}

// checker runs the engine oracles over one case.
type checker struct {
	e     *Engine
	c     *Case
	r     *rand.Rand
	o     Options
	stats Stats
	found []*Mismatch
}

// Check generates the case of seed and runs the engine oracles
// (optimizer, TLP, leaks, panics) over its queries.
func Check(ctx context.Context, seed uint64, o Options) ([]*Mismatch, Stats, error) {
	c := Generate(seed, o)
	return CheckCase(ctx, c, o)
}

// CheckCase runs the engine oracles over c.
func CheckCase(ctx context.Context, c *Case, o Options) ([]*Mismatch, Stats, error) {
	e, err := NewEngine(c.Tables)
	if err != nil {
		return nil, Stats{}, err
	}
	defer e.Close()
	k := &checker{e: e, c: c, r: rand.New(rand.NewPCG(c.Seed, 7)), o: o, stats: Stats{Cases: 1, Checked: map[string]int{}}}
	for _, q := range c.Queries {
		if err := ctx.Err(); err != nil {
			return k.found, k.stats, err
		}
		k.query(ctx, q)
	}
	return k.found, k.stats, nil
}

func (k *checker) report(m *Mismatch) {
	m.Seed = k.c.Seed
	m.Tables = k.c.Tables
	k.found = append(k.found, m)
	k.stats.Mismatches++
}

// run runs text and reports panics and leaks on its own.
func (k *checker) run(ctx context.Context, text string, optimize bool) Result {
	k.stats.Queries++
	res := k.e.Run(ctx, text, optimize)
	if res.Panic != "" {
		k.report(&Mismatch{Oracle: OraclePanic, Query: text, Got: res, Comment: fmt.Sprintf("optimized=%v", optimize)})
	} else if res.Leak != "" {
		k.report(&Mismatch{Oracle: OracleLeak, Query: text, Got: res, Comment: fmt.Sprintf("optimized=%v", optimize)})
	}
	return res
}

func (k *checker) query(ctx context.Context, q *Query) {
	text := q.Render(Spark)
	opt := k.run(ctx, text, true)
	raw := k.run(ctx, text, false)
	if opt.Panic != "" || raw.Panic != "" {
		return
	}
	// Oracle (a): the optimizer must not change the answer. An error on
	// one side only is allowed when it is the unoptimized side (pruning
	// may skip an expression that raises), and reported otherwise.
	switch {
	case opt.Err == nil && raw.Err == nil:
		k.stats.Checked[OracleOptimizer]++
		if !sameRows(raw.Rows, opt.Rows, q.OrderBy) {
			k.report(&Mismatch{Oracle: OracleOptimizer, Query: text, Want: raw, Got: opt, Comment: "reference: analyzed plan without Optimize; engine: optimized plan"})
		}
	case opt.Err != nil && raw.Err == nil:
		// Pushing a filter below a join or a projection evaluates it on
		// rows the unoptimized plan never evaluates it on, so it may
		// raise where the unoptimized plan does not: Spark's optimizer
		// does the same (PushPredicateThroughJoin). Counted, not reported.
		k.stats.OptimizedOnlyErrors++
	default:
		k.stats.Errored++
	}
	if opt.Err != nil {
		return
	}
	// Oracle (b): ternary logic partitioning.
	if q.Limit < 0 && q.Wrap {
		k.tlpOuter(ctx, q, opt)
	}
	if q.Limit < 0 && !q.Wrap && !q.hasWindow() {
		k.tlpWhere(ctx, q, opt)
		if q.Grouped {
			k.tlpHaving(ctx, q, opt)
			k.tlpAggregate(ctx, q, opt)
		}
	}
}

// partitions returns p, NOT p and p IS NULL.
func partitions(p *Expr) []*Expr {
	return []*Expr{p, call("(NOT %s)", cBool, p), call("(%s IS NULL)", cBool, p)}
}

func conjoin(a, b *Expr) *Expr {
	if a == nil {
		return b
	}
	return call("(%s AND %s)", cBool, a, b)
}

func (k *checker) scopeOf(q *Query) scope {
	cols := append([]Column(nil), q.From.Left.Columns...)
	if q.From.Right != nil && !strings.Contains(q.From.Join, "SEMI") && !strings.Contains(q.From.Join, "ANTI") {
		cols = append(cols, q.From.Right.Columns...)
	}
	return scope{cols: cols}
}

// runParts runs the partitions of q (each a copy with its clause set by
// set) and returns the union of their rows; ok is false when one raised.
func (k *checker) runParts(ctx context.Context, q *Query, p *Expr, set func(*Query, *Expr)) (rows []string, texts []string, ok bool) {
	for _, part := range partitions(p) {
		pq := q.clone()
		pq.OrderBy = false
		set(pq, part)
		text := pq.Render(Spark)
		texts = append(texts, text)
		res := k.run(ctx, text, true)
		if res.Err != nil || res.Panic != "" {
			return nil, texts, false
		}
		rows = append(rows, res.Rows...)
	}
	return rows, texts, true
}

// tlpWhere: rows(q) = rows(q WHERE w AND p) ∪ rows(... NOT p) ∪ rows(... p
// IS NULL). For a grouped query the predicate must be over grouping
// columns only to partition groups; the generator's plain predicates are
// over any column, so grouped queries use tlpAggregate instead.
func (k *checker) tlpWhere(ctx context.Context, q *Query, whole Result) {
	if q.Grouped {
		return
	}
	p := exprGen{&gen{r: k.r, o: k.o}, k.scopeOf(q)}.expr(cBool, 2)
	rows, texts, ok := k.runParts(ctx, q, p, func(pq *Query, part *Expr) { pq.Where = conjoin(q.Where, part) })
	if !ok {
		k.stats.Errored++
		return
	}
	k.stats.Checked[OracleTLPWhere]++
	want := whole.Rows
	if q.Distinct {
		rows, want = distinct(rows), distinct(want)
	}
	if !sameRows(want, rows, false) {
		k.report(&Mismatch{Oracle: OracleTLPWhere, Query: q.Render(Spark), Other: strings.Join(texts, ";\n"),
			Want: Result{Rows: rows}, Got: whole, Comment: "reference: union of the three partitions; engine: the whole query"})
	}
}

// tlpHaving partitions the groups of an aggregate query by a predicate
// over its keys and aggregates, conjoined to its HAVING.
func (k *checker) tlpHaving(ctx context.Context, q *Query, whole Result) {
	g := &gen{r: k.r, o: k.o}
	p := g.havingPred(q, exprGen{g, k.scopeOf(q)}, 1)
	rows, texts, ok := k.runParts(ctx, q, p, func(pq *Query, part *Expr) { pq.Having = conjoin(q.Having, part) })
	if !ok {
		k.stats.Errored++
		return
	}
	k.stats.Checked[OracleTLPHaving]++
	want := whole.Rows
	if q.Distinct {
		rows, want = distinct(rows), distinct(want)
	}
	if !sameRows(want, rows, false) {
		k.report(&Mismatch{Oracle: OracleTLPHaving, Query: q.Render(Spark), Other: strings.Join(texts, ";\n"),
			Want: Result{Rows: rows}, Got: whole, Comment: "reference: union of the three HAVING partitions; engine: the whole query"})
	}
}

// tlpAggregate checks MIN, MAX, COUNT and SUM: the aggregate of q equals
// the aggregate, over the three WHERE partitions, of the partitions'
// aggregates (MIN of MINs, MAX of MAXes, SUM of COUNTs and SUMs),
// recombined per group by the engine.
func (k *checker) tlpAggregate(ctx context.Context, q *Query, whole Result) {
	if q.Having != nil || q.Distinct {
		return
	}
	nk := len(q.GroupBy)
	outer := make([]string, len(q.Items))
	var keys []string
	for i, it := range q.Items {
		col := fmt.Sprintf("c%d", i)
		switch {
		case i < nk:
			outer[i] = col
			keys = append(keys, col)
		case it.Agg == "min" || it.Agg == "max":
			outer[i] = fmt.Sprintf("%s(%s)", it.Agg, col)
		case it.Agg == "count" || it.Agg == "count(*)":
			outer[i] = fmt.Sprintf("sum(%s)", col)
		case it.Agg == "sum" && it.E.cls == cInt:
			outer[i] = fmt.Sprintf("sum(%s)", col)
		default:
			return // avg, count(DISTINCT), decimal sums: not decomposable this way
		}
		outer[i] += " AS " + col
	}
	p := exprGen{&gen{r: k.r, o: k.o}, k.scopeOf(q)}.expr(cBool, 2)
	var parts []string
	for _, part := range partitions(p) {
		pq := q.clone()
		pq.OrderBy = false
		pq.Where = conjoin(q.Where, part)
		parts = append(parts, pq.Render(Spark))
	}
	text := fmt.Sprintf("SELECT %s FROM (%s) AS u", strings.Join(outer, ", "), strings.Join(parts, " UNION ALL "))
	if len(keys) > 0 {
		text += " GROUP BY " + strings.Join(keys, ", ")
	}
	res := k.run(ctx, text, true)
	if res.Err != nil || res.Panic != "" {
		k.stats.Errored++
		return
	}
	k.stats.Checked[OracleTLPAgg]++
	if !sameRows(whole.Rows, res.Rows, false) {
		k.report(&Mismatch{Oracle: OracleTLPAgg, Query: q.Render(Spark), Other: text,
			Want: res, Got: whole, Comment: "reference: the partitions' aggregates recombined; engine: the whole query"})
	}
}

// tlpOuter partitions the rows of a wrapped query by a predicate over its
// output columns, conjoined to the outer WHERE: a filter the optimizer
// pushes through aggregates, joins and DISTINCT.
func (k *checker) tlpOuter(ctx context.Context, q *Query, whole Result) {
	p := exprGen{&gen{r: k.r, o: k.o}, q.outputScope()}.expr(cBool, 2)
	rows, texts, ok := k.runParts(ctx, q, p, func(pq *Query, part *Expr) { pq.OuterWhere = conjoin(q.OuterWhere, part) })
	if !ok {
		k.stats.Errored++
		return
	}
	k.stats.Checked[OracleTLPOuter]++
	if !sameRows(whole.Rows, rows, false) {
		k.report(&Mismatch{Oracle: OracleTLPOuter, Query: q.Render(Spark), Other: strings.Join(texts, ";\n"),
			Want: Result{Rows: rows}, Got: whole, Comment: "reference: union of the three partitions of the outer WHERE; engine: the whole query"})
	}
}
