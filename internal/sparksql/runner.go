package sparksql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Outcome classifies one query (see the package documentation).
type Outcome int

// The outcomes.
const (
	Passed Outcome = iota
	Failed
	Skipped
	Wrong
)

func (o Outcome) String() string {
	return [...]string{"passed", "failed", "skipped", "wrong"}[o]
}

// QueryResult is the outcome of one query.
type QueryResult struct {
	File    string
	Index   int // 1-based position in the file
	SQL     string
	Outcome Outcome
	// Detail says why a query did not pass: our error, or the expected and
	// actual answers.
	Detail string
}

// FileResult counts the outcomes of one file.
type FileResult struct {
	Name    string
	ANSI    bool
	Counts  [4]int // by Outcome
	Queries []QueryResult
}

// Summary is the outcome of a run.
type Summary struct {
	Files  []FileResult
	Counts [4]int
}

// Runner runs golden files.
type Runner struct {
	// Allocator for every session (default: Go's allocator). A test passes
	// a checked allocator and checks it after Run.
	Allocator memory.Allocator
	// TimeZone is the session time zone the expected outputs assume.
	TimeZone string
	// QueryTimeout bounds one statement (default 2 minutes).
	QueryTimeout time.Duration
	// Logf, when set, receives progress lines (one per file).
	Logf func(format string, args ...any)
	// PostgresData is the directory of Spark's PostgreSQL test data
	// (agg.data, onek.data, tenk.data), from which every file's session
	// gets the suite's tables aggtest, onek and tenk1 (PostgresDataDir
	// finds it beside a sql-tests tree). Empty: the tables do not exist.
	PostgresData string
}

// DefaultTimeZone is the session time zone of SQLQueryTestSuite.
const DefaultTimeZone = "America/Los_Angeles"

// Run runs every file, each on a fresh session, and returns the summary.
func (r *Runner) Run(ctx context.Context, files []*File) Summary {
	var sum Summary
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		fr := r.RunFile(ctx, f)
		for o, n := range fr.Counts {
			sum.Counts[o] += n
		}
		sum.Files = append(sum.Files, fr)
		if r.Logf != nil {
			r.Logf("%s: %d passed, %d failed, %d skipped, %d wrong", f.Name, fr.Counts[Passed], fr.Counts[Failed], fr.Counts[Skipped], fr.Counts[Wrong])
		}
	}
	return sum
}

// RunFile runs one file's statements in order on a fresh session.
func (r *Runner) RunFile(ctx context.Context, f *File) FileResult {
	mem := r.Allocator
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	tz := r.TimeZone
	if tz == "" {
		tz = DefaultTimeZone
	}
	ansi := "false"
	if f.ANSI {
		ansi = "true"
	}
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: mem,
		Conf:      map[string]string{"spark.sql.session.timeZone": tz, "spark.sql.ansi.enabled": ansi},
	})
	defer closeSession(s)
	fr := FileResult{Name: f.Name, ANSI: f.ANSI}
	if f.SkipReason != "" {
		for i, c := range f.Cases {
			fr.add(QueryResult{File: f.Name, Index: i + 1, SQL: c.SQL, Outcome: Skipped, Detail: f.SkipReason})
		}
		return fr
	}
	if err := registerFunctions(s, f.Functions); err != nil {
		for i, c := range f.Cases {
			fr.add(QueryResult{File: f.Name, Index: i + 1, SQL: c.SQL, Outcome: Failed, Detail: err.Error()})
		}
		return fr
	}
	if err := createTestTables(s, mem); err != nil {
		for i, c := range f.Cases {
			fr.add(QueryResult{File: f.Name, Index: i + 1, SQL: c.SQL, Outcome: Failed, Detail: err.Error()})
		}
		return fr
	}
	if err := createPostgresTables(ctx, s, mem, r.PostgresData); err != nil {
		for i, c := range f.Cases {
			fr.add(QueryResult{File: f.Name, Index: i + 1, SQL: c.SQL, Outcome: Failed, Detail: err.Error()})
		}
		return fr
	}
	// Timestamps are shown in the session time zone, as Spark's HiveResult
	// shows them; the engine honours spark.sql.session.timeZone, so the
	// zone set above is the one it computes in.
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = r.sessionZone(ctx, s)
	}
	fm := Formatter{Loc: loc}
	st := &fileState{broken: map[string]bool{}, settings: map[string]string{}}
	r.applySettings(ctx, s, f, st)
	for i, c := range f.Cases {
		qr := r.runCase(ctx, s, fm, c, st)
		qr.File, qr.Index, qr.SQL = f.Name, i+1, c.SQL
		fr.add(qr)
	}
	return fr
}

func (fr *FileResult) add(q QueryResult) {
	fr.Counts[q.Outcome]++
	fr.Queries = append(fr.Queries, q)
}

// sessionZone asks the engine for its session time zone (current_timezone())
// so that timestamps are shown as the engine means them; an engine without
// one works in UTC.
func (r *Runner) sessionZone(ctx context.Context, s *arrowstream.Session) *time.Location {
	rows, _, err := r.query(ctx, s, Formatter{Loc: time.UTC}, "SELECT current_timezone()")
	if err != nil || len(rows) != 1 {
		return time.UTC
	}
	loc, err := time.LoadLocation(rows[0])
	if err != nil {
		return time.UTC
	}
	return loc
}

// setupTarget matches statements that create or fill a table or view, or
// compute its statistics (ANALYZE TABLE, which DESC EXTENDED t col
// shows), and captures its name.
var setupTarget = regexp.MustCompile("(?is)^\\s*(?:create\\s+(?:or\\s+replace\\s+)?(?:global\\s+)?(?:temporary\\s+|temp\\s+)?(?:view|table)(?:\\s+if\\s+not\\s+exists)?|insert\\s+(?:into|overwrite)(?:\\s+table)?|alter\\s+(?:table|view)|truncate\\s+table|analyze\\s+table)\\s+([\\w.`]+)")

// withInsertTarget matches WITH ... INSERT INTO name and captures the
// name.
var withInsertTarget = regexp.MustCompile("(?is)^\\s*with\\s.*?\\)\\s*insert\\s+(?:into|overwrite)(?:\\s+table)?\\s+([\\w.`]+)")

// setupReplaces matches the setup statements that define a table's rows
// anew (a CREATE or INSERT OVERWRITE), after which an earlier refusal no
// longer matters; an INSERT INTO adds to whatever the table holds.
var setupReplaces = regexp.MustCompile("(?is)^\\s*(?:create|insert\\s+overwrite)\\s")

// fileState is what earlier statements of a file left behind that later
// outcomes depend on.
type fileState struct {
	broken   map[string]bool   // tables and views whose setup statement was refused
	settings map[string]string // settings whose SET was refused, with the SET
}

// setKey matches SET key = value and captures the key; a USE or CREATE
// DATABASE also changes what later statements mean (their database).
var setKey = regexp.MustCompile(`(?is)^\s*(?:set\s+([^=\s]+)\s*=|(use)\s|(create)\s+(?:database|schema|namespace)\s)`)

// partitionDependent matches queries whose answer depends on how Spark
// split the input into partitions.
var partitionDependent = regexp.MustCompile(`(?i)\bhistogram_numeric\s*\(`)

// explainStmt matches EXPLAIN statements.
var explainStmt = regexp.MustCompile(`(?is)^\s*explain\s`)

// describeFunctionStmt is DESC[RIBE] FUNCTION: Spark's answer names the
// Scala class of the function and its own usage text, which the engine's
// answer (in its own words) can never reproduce.
var describeFunctionStmt = regexp.MustCompile(`(?is)^\s*desc(ribe)?\s+function\s`)

func (r *Runner) runCase(ctx context.Context, s *arrowstream.Session, fm Formatter, c Case, st *fileState) QueryResult {
	qr := r.judge(ctx, s, fm, c, st)
	if qr.Outcome == Wrong && describeFunctionStmt.MatchString(c.SQL) {
		// An answer in the engine's words is a failure to reproduce
		// Spark's text, never a wrong answer; nor is an answer where Spark
		// raises (a function Spark lacks but the engine has).
		return QueryResult{Outcome: Failed, Detail: "DESCRIBE FUNCTION answers in the engine's words, not Spark's class names and text; " + qr.Detail}
	}
	if qr.Outcome == Wrong && !c.Error {
		// An answer about a table whose setup (CREATE, INSERT, ALTER) was
		// refused is about another table than Spark's.
		if dependsOnBroken(c.SQL, st.broken) {
			return QueryResult{Outcome: Skipped, Detail: "depends on a refused setup statement; " + qr.Detail}
		}
		// EXPLAIN shows the engine's own plan, never Spark's.
		if explainStmt.MatchString(c.SQL) {
			return QueryResult{Outcome: Skipped, Detail: "EXPLAIN shows the engine's plan, not Spark's; " + qr.Detail}
		}
	}
	if qr.Outcome == Wrong && !c.Error && partitionDependent.MatchString(c.SQL) {
		// histogram_numeric merges partial histograms as Spark's input
		// partitions come, which differ from the engine's: an answer that
		// differs is a failure to reproduce, counted as failed, not passed.
		return QueryResult{Outcome: Failed, Detail: "histogram_numeric's bins depend on Spark's input partitioning; " + qr.Detail}
	}
	if qr.Outcome == Wrong {
		// A refused SET leaves the session in another configuration than
		// Spark's: an answer that differs from Spark's under it cannot be
		// judged (errors are still failures).
		for _, set := range st.settings {
			return QueryResult{Outcome: Skipped, Detail: fmt.Sprintf("runs after the refused %q; %s", set, qr.Detail)}
		}
	}
	return qr
}

func (r *Runner) judge(ctx context.Context, s *arrowstream.Session, fm Formatter, c Case, st *fileState) QueryResult {
	rows, schema, err := r.query(ctx, s, fm, c.SQL)
	target := ""
	if m := setupTarget.FindStringSubmatch(c.SQL); m != nil {
		target = strings.ToLower(strings.Trim(m[1], "`"))
	} else if m := withInsertTarget.FindStringSubmatch(c.SQL); m != nil {
		target = strings.ToLower(strings.Trim(m[1], "`"))
	}
	setting := ""
	if m := setKey.FindStringSubmatch(c.SQL); m != nil {
		setting = strings.ToLower(m[1] + m[2] + m[3])
	}
	if err != nil {
		if target != "" && !c.Error {
			st.broken[target] = true
		}
		if setting != "" && !c.Error {
			st.settings[setting] = c.SQL
		}
		switch {
		case c.Error:
			return QueryResult{Outcome: Passed}
		case isUnsupported(err):
			return QueryResult{Outcome: Skipped, Detail: err.Error()}
		case dependsOnBroken(c.SQL, st.broken):
			return QueryResult{Outcome: Skipped, Detail: "depends on a refused setup statement: " + err.Error()}
		}
		return QueryResult{Outcome: Failed, Detail: err.Error()}
	}
	if target != "" && setupReplaces.MatchString(c.SQL) {
		delete(st.broken, target)
	}
	if setting != "" {
		delete(st.settings, setting)
	}
	if c.Error {
		return QueryResult{Outcome: Wrong, Detail: fmt.Sprintf("Spark raises %s\ngot:\n%s", strings.Join(c.Output, "\n"), strings.Join(rows, "\n"))}
	}
	got := strings.TrimRight(strings.Join(rows, "\n"), " \t\n\r")
	want := strings.Join(c.Output, "\n")
	if got != want {
		if collectSetQuery.MatchString(c.SQL) && sameUpToArrayOrder(got, want) {
			// collect_set's element order is Spark's hash set order after
			// Spark's partial merges, which follow its input partitions
			// (Spark documents the function as non-deterministic). The same
			// elements in another order are a failure to reproduce that
			// order: counted as failed, never as passed.
			return QueryResult{Outcome: Failed, Detail: fmt.Sprintf("collect_set: the same elements in another order than Spark's (its order depends on Spark's input partitions)\nwant:\n%s\ngot:\n%s", want, got)}
		}
		return QueryResult{Outcome: Wrong, Detail: fmt.Sprintf("want:\n%s\ngot:\n%s", want, got)}
	}
	if schema != nil && c.Schema != "struct<>" && !SchemaMatches(c.Schema, schema) {
		var types []string
		for _, f := range schema.Fields() {
			types = append(types, TypeName(f.Type))
		}
		return QueryResult{Outcome: Wrong, Detail: fmt.Sprintf("same rows, other column types: want %s, got (%s)", c.Schema, strings.Join(types, ","))}
	}
	return QueryResult{Outcome: Passed}
}

// query runs one statement and renders its rows (sorted unless the plan
// is sorted, as SQLQueryTestSuite does). schema is nil for statements
// without rows.
func (r *Runner) query(ctx context.Context, s *arrowstream.Session, fm Formatter, text string) (rows []string, schema *arrow.Schema, err error) {
	timeout := r.QueryTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sparksql: panic: %v", p)
		}
	}()
	res, err := s.SQL(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	defer res.Close()
	if res.Query != nil {
		res.Query.Stop()
	}
	if res.Op == nil {
		return nil, nil, nil
	}
	recs, err := vector.Drain(ctx, res.Op)
	if err != nil {
		return nil, nil, err
	}
	for _, rec := range recs {
		if d, ok := describeRows(rec); ok {
			rows = append(rows, d...)
		} else {
			for i := 0; i < int(rec.NumRows()); i++ {
				rows = append(rows, fm.Row(rec, i))
			}
		}
		rec.Release()
	}
	if !sortedQuery(text, s) {
		sort.Strings(rows)
	}
	return rows, res.Schema, nil
}

// sortedQuery reports whether the statement's analyzed plan is sorted in
// SQLQueryTestSuite's sense: a global sort reached from the root without
// passing a join, an aggregate or a DISTINCT.
func sortedQuery(text string, s *arrowstream.Session) bool {
	stmt, err := sql.Parse(text)
	if err != nil {
		return false
	}
	switch stmt.(type) {
	case *sql.Describe, *sql.DescribeQuery:
		// SQLQueryTestSuite keeps the rows of a DESCRIBE of a table, a
		// column or a query in their order (its isSorted counts the
		// describe commands as sorted): the order is part of the answer.
		return true
	}
	// Analyzed with the session's settings (ANSI off accepts what ANSI
	// refuses), as the statement ran.
	opts, err := s.AnalysisOptions()
	if err != nil {
		return false
	}
	st, err := plan.AnalyzeWith(stmt, s.Catalog(), opts)
	if err != nil {
		return false
	}
	q, ok := st.(*plan.QueryStatement)
	return ok && isSorted(q.Plan)
}

func isSorted(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Join, *plan.Aggregate, *plan.Deduplicate:
		return false
	case *plan.Sort:
		// SORT BY (a local sort) orders Spark's partitions, not its
		// result: SQLQueryTestSuite sorts the rows of such a query.
		if !x.Local {
			return true
		}
	}
	for _, c := range n.Children() {
		if isSorted(c) {
			return true
		}
	}
	return false
}

// isUnsupported reports whether err is a refusal of an unsupported feature
// rather than a failure.
func isUnsupported(err error) bool {
	if errors.Is(err, plan.ErrUnsupported) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "not supported") || strings.Contains(msg, "unsupported")
}

var word = regexp.MustCompile("[\\w.`]+")

func dependsOnBroken(text string, broken map[string]bool) bool {
	if len(broken) == 0 {
		return false
	}
	for _, w := range word.FindAllString(text, -1) {
		w = strings.ToLower(strings.ReplaceAll(w, "`", ""))
		// default.t and spark_catalog.default.t name the table a setup
		// statement wrote as t (Spark's current database is default).
		for _, prefix := range []string{"spark_catalog.default.", "default."} {
			if rest, ok := strings.CutPrefix(w, prefix); ok && broken[rest] {
				return true
			}
		}
		if broken[w] {
			return true
		}
	}
	return false
}

// closeSession stops the session's queries and drops its tables, so that
// a checked allocator ends at zero.
func closeSession(s *arrowstream.Session) {
	s.Streams().StopAll()
	if l, ok := s.Catalog().(plan.TableLister); ok {
		for _, n := range l.TableNames() {
			_, _ = s.SQL(context.Background(), "DROP TABLE IF EXISTS `"+strings.ReplaceAll(n, "`", "``")+"`")
			s.DropTable(n)
		}
	}
}

// WriteTable prints the per-file table and the totals line
// "N passed, M failed, K skipped, W wrong".
func (sum Summary) WriteTable(w io.Writer) {
	width := len("file")
	for _, f := range sum.Files {
		width = max(width, len(f.Name)+7)
	}
	fmt.Fprintf(w, "%-*s %7s %7s %7s %7s\n", width, "file", "passed", "failed", "skipped", "wrong")
	for _, f := range sum.Files {
		name := f.Name
		if f.ANSI {
			name += " (ansi)"
		}
		fmt.Fprintf(w, "%-*s %7d %7d %7d %7d\n", width, name, f.Counts[Passed], f.Counts[Failed], f.Counts[Skipped], f.Counts[Wrong])
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped, %d wrong\n", sum.Counts[Passed], sum.Counts[Failed], sum.Counts[Skipped], sum.Counts[Wrong])
}

// WriteDetails prints every query that did not pass, with why.
func (sum Summary) WriteDetails(w io.Writer, outcomes ...Outcome) {
	want := map[Outcome]bool{}
	for _, o := range outcomes {
		want[o] = true
	}
	for _, f := range sum.Files {
		for _, q := range f.Queries {
			if q.Outcome == Passed || (len(want) > 0 && !want[q.Outcome]) {
				continue
			}
			fmt.Fprintf(w, "--- %s #%d %s\n%s\n%s\n\n", f.Name, q.Index, strings.ToUpper(q.Outcome.String()), q.SQL, q.Detail)
		}
	}
}
