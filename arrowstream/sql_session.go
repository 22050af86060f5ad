package arrowstream

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Result is what a SQL statement produced: rows to read (Op, owned by the
// caller, who must Close it), a started query (CREATE STREAMING TABLE), or
// nothing.
type Result struct {
	Schema *arrow.Schema
	Op     vector.Operator
	Query  *StreamingQuery
}

// Close releases the result's rows, if any.
func (r *Result) Close() error {
	if r == nil || r.Op == nil {
		return nil
	}
	return r.Op.Close()
}

// TableDropper is a catalog (added with AddCatalog) that can drop its
// tables (the memory sink's).
type TableDropper interface {
	DropTable(name string) bool
}

// HistoryTable is a table that can describe its committed epochs (DESCRIBE
// HISTORY): epoch, rows, bytes, commit time.
type HistoryTable interface {
	History(mem memory.Allocator) (arrow.Record, error)
}

// SQL runs one statement of the dialect in SQL.md:
//
//   - SELECT, EXPLAIN, SHOW TABLES, DESCRIBE [HISTORY]: Result.Op has the rows;
//   - CREATE [OR REPLACE] TABLE name [(cols)] USING format OPTIONS (...):
//     declares a source (or, for format memory, a stream that clients
//     push into);
//   - CREATE [OR REFRESH|OR REPLACE] STREAMING TABLE name [TBLPROPERTIES (...)] AS
//     query: starts the query into the memory-sink table name (properties
//     outputMode, trigger, checkpointLocation, and the memory sink's
//     options); Result.Query is the query. OR REPLACE starts over: the
//     table is dropped and its checkpoint archived first;
//   - DROP TABLE [IF EXISTS] name: stops the streaming table's query and
//     drops the table, or drops a source.
//
// With a durable catalog (RestoreCatalog), CREATE and DROP statements are
// also recorded in the catalog log; see catalog_ddl.go for how a
// statement that repeats or changes a recorded definition is answered.
func (s *Session) SQL(ctx context.Context, text string) (*Result, error) {
	stmt, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if x, ok := stmt.(*sql.CreateTable); ok && x.Query != nil {
		return s.createTableAs(ctx, x)
	}
	if c := s.durable.Load(); c != nil && isDDL(stmt) {
		return s.durableDDL(ctx, c, stmt)
	}
	if x, ok := stmt.(*sql.CreateStreamingTable); ok && x.OrReplace {
		s.ddlMu.Lock()
		defer s.ddlMu.Unlock()
		if err := s.startOver(identName(x.Name), ""); err != nil {
			return nil, err
		}
	}
	return s.runStatement(ctx, stmt)
}

// runStatement analyzes and runs a parsed statement.
func (s *Session) runStatement(ctx context.Context, stmt sql.Statement) (*Result, error) {
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), s.confFor(ctx))
	if err != nil {
		return nil, err
	}
	st, err := plan.AnalyzeWith(stmt, s.Catalog(), opts)
	if err != nil {
		return nil, err
	}
	switch x := st.(type) {
	case *plan.QueryStatement:
		// The analyzed plan keeps a comma join's WHERE above a cross join
		// and every column of the tables; the optimizer's push-downs make
		// it an equi-join over the columns used, as EXPLAIN shows.
		n, err := plan.OptimizeContext(ctx, x.Plan)
		if err != nil {
			return nil, err
		}
		op, err := plan.Execute(ctx, s.mem, n, nil)
		if err != nil {
			return nil, err
		}
		return &Result{Schema: op.Schema(), Op: op}, nil
	case *plan.ExplainStatement:
		return s.explain(x)
	case *plan.StreamingTableStatement:
		return s.createStreamingTable(ctx, x)
	case *plan.CommandStatement:
		return s.command(ctx, x.Stmt)
	case *plan.CreateViewStatement:
		return &Result{}, s.createView(x)
	case *plan.InsertStatement:
		return &Result{}, plan.ExecuteInsert(ctx, s.mem, x)
	}
	return nil, fmt.Errorf("arrowstream: unsupported statement %T", st)
}

func (s *Session) explain(x *plan.ExplainStatement) (*Result, error) {
	text, err := plan.ExplainText(x)
	if err != nil {
		return nil, err
	}
	return s.textResult("plan", strings.Split(strings.TrimRight(text, "\n"), "\n"))
}

// textResult is a one-string-column result.
func (s *Session) textResult(col string, lines []string) (*Result, error) {
	schema := arrow.NewSchema([]arrow.Field{{Name: col, Type: vector.String, Nullable: true}}, nil)
	return s.rowsResult(schema, func(b *array.RecordBuilder) {
		for _, l := range lines {
			b.Field(0).(*array.StringBuilder).Append(l)
		}
	})
}

func (s *Session) createStreamingTable(ctx context.Context, x *plan.StreamingTableStatement) (*Result, error) {
	if err := s.checkSinkOptions("memory", "streaming table "+x.Name, x.Properties); err != nil {
		return nil, err
	}
	df := s.frame(x.Query, nil)
	w := df.WriteStream().Format("memory").QueryName(x.Name)
	for k, v := range x.Properties {
		switch k {
		case "outputmode":
			w.OutputModeString(v)
		case "trigger":
			t, err := ParseTrigger(v)
			if err != nil {
				return nil, err
			}
			w.Trigger(t)
		default:
			w.Option(k, v)
		}
	}
	if x.OrRefresh {
		for _, q := range s.manager.Active() {
			if sameName(q.Name(), x.Name) {
				q.Stop()
			}
		}
	}
	q, err := w.Start(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Query: q}, nil
}

func identName(parts []sql.Ident) string {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Name
	}
	return strings.Join(names, ".")
}

func (s *Session) command(ctx context.Context, stmt sql.Statement) (*Result, error) {
	switch x := stmt.(type) {
	case *sql.CreateTable:
		if err := s.createTable(x); err != nil {
			return nil, err
		}
		return &Result{}, nil
	case *sql.DropTable:
		key, _ := s.tableKey(identName(x.Name))
		if err := s.dropTable(key, x.IfExists); err != nil {
			return nil, err
		}
		return &Result{}, nil
	case *sql.CreateDatabase:
		return &Result{}, s.createDatabase(x)
	case *sql.DropDatabase:
		return &Result{}, s.dropDatabase(x)
	case *sql.Use:
		return &Result{}, s.useDatabase(x)
	case *sql.ShowTables:
		return s.showTables()
	case *sql.ShowFunctions:
		return s.showFunctions(x)
	case *sql.DescribeFunction:
		if rows, ok := s.describeUserFunction(x.Name, x.Extended); ok {
			return s.textResult("function_desc", rows)
		}
		rows, err := plan.DescribeFunction(x.Pos, x.Name, x.Extended)
		if err != nil {
			return nil, err
		}
		return s.textResult("function_desc", rows)
	case *sql.Set:
		return s.set(x)
	case *sql.Describe:
		return s.describeStmt(x)
	case *sql.DescribeQuery:
		return s.describeQuery(ctx, x)
	case *sql.ShowColumns:
		return s.showColumns(x)
	case *sql.DescribeHistory:
		name := identName(x.Name)
		t, err := s.Catalog().Table(name)
		if err != nil {
			return nil, err
		}
		h, ok := t.(HistoryTable)
		if !ok {
			return nil, fmt.Errorf("arrowstream: DESCRIBE HISTORY %s: not a streaming table (only sink tables have epochs)", name)
		}
		rec, err := h.History(s.mem)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		op, err := vector.NewScan(rec.Schema(), rec)
		if err != nil {
			return nil, err
		}
		return &Result{Schema: rec.Schema(), Op: op}, nil
	case *sql.Subscribe:
		return nil, fmt.Errorf("arrowstream: SUBSCRIBE %s: a subscription never ends, so it is served over Flight SQL (arrowstream serve, the arrowstream sql shell), not as a session result: %w", identName(x.Name), plan.ErrUnsupported)
	case *sql.Truncate:
		return &Result{}, s.truncate(identName(x.Name))
	}
	return nil, fmt.Errorf("arrowstream: statement %T is not supported", stmt)
}

// set runs SET key [= value]: settings the engine honours are stored in
// the session's conf (plan.CheckSetting refuses the others); the answer
// is the key and its value, as Spark's.
func (s *Session) set(x *sql.Set) (*Result, error) {
	if x.HasValue {
		if err := plan.CheckSetting(x.Key, x.Value); err != nil {
			return nil, err
		}
		if _, err := plan.OptionsFromConf(plan.DefaultOptions(), map[string]string{x.Key: x.Value}); err != nil {
			return nil, err
		}
		s.SetConf(x.Key, x.Value)
	}
	v, ok := s.Conf(x.Key)
	if !ok {
		v = "<undefined>"
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: vector.String}, {Name: "value", Type: vector.String}}, nil)
	return s.rowsResult(schema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).Append(x.Key)
		b.Field(1).(*array.StringBuilder).Append(v)
	})
}

// createView registers a temporary view in the session's catalog.
func (s *Session) createView(x *plan.CreateViewStatement) error {
	// Views belong to no database: their name is their key.
	if _, err := s.catalog.Table(x.View.Name); err == nil && !x.OrReplace {
		if x.IfNotExists {
			return nil
		}
		return fmt.Errorf("arrowstream: [TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] cannot create the temporary view %s because it already exists", x.View.Name)
	}
	s.DropTable(x.View.Name) // releases what it replaces
	s.catalog.Register(x.View.Name, x.View)
	return nil
}

func (s *Session) createTable(x *sql.CreateTable) error {
	name, db := s.tableKey(identName(x.Name))
	if err := s.checkDatabase(db); err != nil {
		return err
	}
	if x.OrReplace {
		s.dropLocal(name)
	}
	if _, err := s.Catalog().Table(name); err == nil {
		if x.IfNotExists {
			return nil
		}
		return fmt.Errorf("arrowstream: table %s already exists", name)
	}
	var schema *arrow.Schema
	if x.Columns != nil {
		fields := make([]arrow.Field, len(x.Columns))
		for i, c := range x.Columns {
			dt, err := plan.ConvertColumnType(c.Type)
			if err != nil {
				return fmt.Errorf("arrowstream: table %s column %s: %w", name, c.Name.Name, err)
			}
			fields[i] = arrow.Field{Name: c.Name.Name, Type: dt, Nullable: !c.NotNull}
		}
		schema = arrow.NewSchema(fields, nil)
	}
	opts := map[string]string{}
	for _, p := range x.Options {
		opts[p.Key] = p.Value
	}
	format := identName(x.Using)
	if x.Using == nil {
		format = "parquet" // Spark's default data source (spark.sql.sources.default)
	}
	if _, hasPath := opts["path"]; strings.EqualFold(format, "parquet") && schema != nil && !hasPath {
		t, err := s.newStaticTable(name, schema)
		if err != nil {
			return fmt.Errorf("arrowstream: table %s: %w", name, err)
		}
		s.catalog.Register(name, t)
		return nil
	}
	if strings.EqualFold(format, "memory") {
		if schema == nil {
			return fmt.Errorf("arrowstream: table %s USING memory needs a column list", name)
		}
		if err := s.checkSourceOptions(format, opts); err != nil {
			return fmt.Errorf("arrowstream: table %s: %w", name, err)
		}
		s.RegisterStream(name, NewMemoryStream(s.mem, schema))
		return nil
	}
	return s.RegisterSource(name, format, schema, opts)
}

func (s *Session) dropTable(name string, ifExists bool) error {
	found := false
	for _, q := range s.manager.Active() {
		if sameName(q.Name(), name) {
			q.Stop()
			found = true
		}
	}
	if t, err := s.catalog.Table(name); err == nil {
		if st, ok := t.(*streamTable); ok && st.shared != nil {
			defer st.shared.Close()
		}
		found = s.DropTable(name) || found
	}
	s.mu.Lock()
	extra := append([]plan.Catalog(nil), s.extraTables...)
	s.mu.Unlock()
	for _, c := range extra {
		if d, ok := c.(TableDropper); ok && d.DropTable(name) {
			found = true
		}
	}
	if !found && !ifExists {
		return fmt.Errorf("arrowstream: DROP TABLE %s: %w", backquoteName(name), plan.ErrTableNotFound)
	}
	return nil
}

func (s *Session) showTables() (*Result, error) {
	if db := s.dbs.currentDB(); db != defaultDatabase {
		// Spark answers namespace, tableName, isTemporary; this engine's
		// SHOW TABLES has its own columns, so it is not passed off as
		// Spark's answer for another database.
		return nil, fmt.Errorf("arrowstream: SHOW TABLES in database %s: SHOW TABLES lists the default database's tables (tableName, isStreaming); USE default, or SHOW COLUMNS IN %s.name: %w", backquoteName(db), db, plan.ErrUnsupported)
	}
	cat := s.Catalog()
	var names []string
	for _, n := range cat.(plan.TableLister).TableNames() {
		if !s.inOtherDatabase(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "tableName", Type: vector.String},
		{Name: "isStreaming", Type: vector.Boolean},
	}, nil)
	return s.rowsResult(schema, func(b *array.RecordBuilder) {
		for _, n := range names {
			t, err := cat.Table(n)
			if err != nil {
				continue
			}
			b.Field(0).(*array.StringBuilder).Append(n)
			b.Field(1).(*array.BooleanBuilder).Append(t.Streaming())
		}
	})
}

func (s *Session) describe(name string) (*Result, error) {
	t, err := s.Catalog().Table(name)
	if err != nil {
		return nil, err
	}
	return s.describeSchema(t.Schema())
}

// describeSchema lists the columns of a schema as DESCRIBE does.
func (s *Session) describeSchema(ts *arrow.Schema) (*Result, error) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "col_name", Type: vector.String},
		{Name: "data_type", Type: vector.String},
		// Spark's third column; the engine keeps no column comments.
		{Name: "comment", Type: vector.String, Nullable: true},
	}, nil)
	return s.rowsResult(schema, func(b *array.RecordBuilder) {
		for _, f := range ts.Fields() {
			b.Field(0).(*array.StringBuilder).Append(f.Name)
			b.Field(1).(*array.StringBuilder).Append(vector.TypeName(f.Type))
			b.Field(2).(*array.StringBuilder).AppendNull()
		}
	})
}

func (s *Session) rowsResult(schema *arrow.Schema, fill func(b *array.RecordBuilder)) (*Result, error) {
	b := array.NewRecordBuilder(s.mem, schema)
	defer b.Release()
	fill(b)
	rec := b.NewRecord()
	defer rec.Release()
	op, err := vector.NewScan(schema, rec)
	if err != nil {
		return nil, err
	}
	return &Result{Schema: schema, Op: op}, nil
}
