package arrowstream

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// createTableAs runs CREATE TABLE name [USING parquet] AS query (CTAS): a
// static table of the session (Spark's managed table in its default data
// source, parquet) with the query's columns, then its rows. It is the
// statement CREATE TABLE name (cols) followed by INSERT INTO name query,
// so that a durable catalog records the columns, not the query, and keeps
// the rows as it keeps an INSERT's. A failing query leaves no table.
func (s *Session) createTableAs(ctx context.Context, x *sql.CreateTable) (*Result, error) {
	name := identName(x.Name)
	if x.Using != nil && !strings.EqualFold(identName(x.Using), "parquet") {
		return nil, fmt.Errorf("arrowstream: CREATE TABLE %s USING %s AS SELECT: only parquet (the default) tables can be created from a query: %w", name, identName(x.Using), plan.ErrUnsupported)
	}
	for _, p := range x.Options {
		if strings.EqualFold(p.Key, "path") {
			return nil, fmt.Errorf("arrowstream: CREATE TABLE %s AS SELECT with a path: tables with files are streaming sources here, not written by a query: %w", name, plan.ErrUnsupported)
		}
	}
	if _, err := s.Catalog().Table(name); err == nil && !x.OrReplace {
		if x.IfNotExists {
			return &Result{}, nil
		}
		return nil, fmt.Errorf("arrowstream: [TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view %s because it already exists", backquoteName(name))
	}
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), s.confCopy())
	if err != nil {
		return nil, err
	}
	st, err := plan.AnalyzeWith(x.Query, s.Catalog(), opts)
	if err != nil {
		return nil, err
	}
	q, ok := st.(*plan.QueryStatement)
	if !ok {
		return nil, fmt.Errorf("arrowstream: CREATE TABLE %s AS: not a query", name)
	}
	if q.Plan.IsStreaming() {
		return nil, fmt.Errorf("arrowstream: CREATE TABLE %s AS SELECT reads a stream: use CREATE STREAMING TABLE for a table a streaming query keeps: %w", name, plan.ErrStreaming)
	}
	cols, err := columnDefs(name, x.Pos, q.Plan)
	if err != nil {
		return nil, err
	}
	create := &sql.CreateTable{Pos: x.Pos, OrReplace: x.OrReplace, Name: x.Name, Columns: cols, Using: x.Using, Options: x.Options}
	if _, err := s.ddl(ctx, create); err != nil {
		return nil, err
	}
	res, err := s.runStatement(ctx, &sql.Insert{Pos: x.Pos, Name: x.Name, Query: x.Query})
	if err != nil {
		if _, dropErr := s.ddl(ctx, &sql.DropTable{Pos: x.Pos, IfExists: true, Name: x.Name}); dropErr != nil {
			return nil, fmt.Errorf("%w (and dropping the new table %s failed: %v)", err, name, dropErr)
		}
		return nil, err
	}
	return res, nil
}

// ddl runs a catalog statement as SQL does: through the durable catalog
// when the session has one.
func (s *Session) ddl(ctx context.Context, stmt sql.Statement) (*Result, error) {
	if c := s.durable.Load(); c != nil {
		return s.durableDDL(ctx, c, stmt)
	}
	return s.runStatement(ctx, stmt)
}

// columnDefs are the column definitions of a table with n's columns, as
// Spark's CTAS takes them from the query: names as the query gives them
// (each once), every column nullable.
func columnDefs(table string, pos sql.Pos, n plan.Node) ([]*sql.ColumnDef, error) {
	fields := n.Schema().Fields()
	seen := make(map[string]bool, len(fields))
	cols := make([]*sql.ColumnDef, len(fields))
	for i, f := range fields {
		key := strings.ToLower(f.Name)
		if seen[key] {
			return nil, fmt.Errorf("arrowstream: [COLUMN_ALREADY_EXISTS] The column %s already exists in the query of CREATE TABLE %s. Choose another name or rename the existing column", backquoteName(f.Name), table)
		}
		seen[key] = true
		tn, err := sql.ParseType(vector.TypeName(f.Type))
		if err != nil {
			return nil, fmt.Errorf("arrowstream: CREATE TABLE %s AS SELECT: column %s of type %s cannot be a table column: %w", table, f.Name, vector.TypeName(f.Type), plan.ErrUnsupported)
		}
		// The query's TIMESTAMP is an instant whatever the session's
		// spark.sql.timestampType says when the table is created.
		sql.Inspect(tn, func(n sql.Node) bool {
			if t, ok := n.(*sql.TypeName); ok && t.Name == "TIMESTAMP" {
				t.LTZ = true
			}
			return true
		})
		cols[i] = &sql.ColumnDef{Pos: pos, Name: sql.Ident{Pos: pos, Name: f.Name}, Type: tn}
	}
	return cols, nil
}

// backquoteName quotes a name as Spark's messages show it.
func backquoteName(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// showFunctions answers SHOW [USER|SYSTEM|ALL] FUNCTIONS [LIKE pattern]
// from the planner's function list (the registry calls resolve from) and
// the session's user functions (RegisterFunction), in Spark's column
// function: SYSTEM lists the built-in ones, USER the user functions, ALL
// (the default) both. The pattern is Spark's: * matches any characters, |
// separates alternatives, case-insensitively.
func (s *Session) showFunctions(x *sql.ShowFunctions) (*Result, error) {
	var names []string
	if x.Scope != "USER" {
		names = plan.FunctionNames()
	}
	if x.Scope != "SYSTEM" {
		names = append(names, s.userFunctionNames()...)
		slices.Sort(names)
	}
	if x.HasLike {
		var alts []string
		for _, a := range strings.Split(x.Pattern, "|") {
			alts = append(alts, strings.ReplaceAll(regexp.QuoteMeta(strings.TrimSpace(a)), `\*`, ".*"))
		}
		re, err := regexp.Compile("(?i)^(?:" + strings.Join(alts, "|") + ")$")
		if err != nil {
			return nil, fmt.Errorf("arrowstream: SHOW FUNCTIONS LIKE %q: %w", x.Pattern, err)
		}
		kept := names[:0]
		for _, n := range names {
			if re.MatchString(n) {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	return s.textResult("function", names)
}
