package arrowstream

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Databases (Spark's namespaces of spark_catalog) are a session's name
// spaces for tables: CREATE DATABASE, USE, DROP DATABASE. The tables of
// the default database keep their plain names in the session's catalog
// (so that sources, static, sink and durable tables are what they were);
// a table of database d is kept under "d.name". Temporary views belong to
// no database and shadow the current database's tables, as in Spark. A
// database is a name only, never a directory: names are plain identifiers,
// LOCATION is refused, and a session with a durable catalog refuses
// CREATE DATABASE (the catalog log does not record them).

// defaultDatabase is the database every session starts in.
const defaultDatabase = "default"

// databases is a session's set of databases and its current one.
type databases struct {
	mu      sync.Mutex
	names   map[string]string // lower-case name -> name as created
	current string            // lower-case; "" is the default database
}

// databaseNameRE is what a database may be called: an identifier (Spark
// allows more inside backquotes; a plain word cannot be mistaken for a
// path or a qualified name).
var databaseNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// reservedDatabases are names that already mean something as a
// qualifier: the system tables and Spark's global temporary views.
var reservedDatabases = map[string]bool{"system": true, "global_temp": true, "spark_catalog": true}

func (d *databases) exists(lower string) bool {
	if lower == defaultDatabase {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.names[lower]
	return ok
}

func (d *databases) currentDB() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.current == "" {
		return defaultDatabase
	}
	return d.current
}

// tableKey maps a table name as written (dotted) to the key of the
// session's catalog and the database it lives in ("" for a temporary
// view or a name outside every database, such as system.streaming_queries).
func (s *Session) tableKey(name string) (key, db string) {
	parts := strings.Split(name, ".")
	if len(parts) >= 3 && strings.EqualFold(parts[0], "spark_catalog") {
		parts = parts[1:]
	}
	switch len(parts) {
	case 1:
		if t, err := s.catalog.Table(name); err == nil {
			if _, ok := t.(*plan.View); ok {
				return name, ""
			}
		}
		cur := s.dbs.currentDB()
		if cur == defaultDatabase {
			return name, defaultDatabase
		}
		return cur + "." + name, cur
	case 2:
		lower := strings.ToLower(parts[0])
		if lower == defaultDatabase {
			return parts[1], defaultDatabase
		}
		if lower == plan.GlobalTempDatabase || s.dbs.exists(lower) {
			return lower + "." + parts[1], lower
		}
	}
	return strings.Join(parts, "."), ""
}

// TableDatabase implements plan.DatabaseCatalog.
func (c sessionCatalog) TableDatabase(name string) string {
	_, db := c.s.tableKey(name)
	return db
}

// createDatabase runs CREATE DATABASE.
func (s *Session) createDatabase(x *sql.CreateDatabase) error {
	name := x.Name.Name
	lower := strings.ToLower(name)
	if !databaseNameRE.MatchString(name) {
		return fmt.Errorf("arrowstream: [INVALID_SCHEMA_OR_RELATION_NAME] %s is not a valid database name: use letters, digits and _ (at most 128), not starting with a digit", backquoteName(name))
	}
	if reservedDatabases[lower] {
		return fmt.Errorf("arrowstream: CREATE DATABASE %s: the name is reserved (it qualifies system tables or global temporary views)", backquoteName(name))
	}
	if s.durable.Load() != nil {
		return fmt.Errorf("arrowstream: CREATE DATABASE %s: databases are not recorded by the durable catalog; create tables in the default database: %w", backquoteName(name), plan.ErrUnsupported)
	}
	if s.dbs.exists(lower) {
		if x.IfNotExists {
			return nil
		}
		return fmt.Errorf("arrowstream: [SCHEMA_ALREADY_EXISTS] Cannot create schema %s because it already exists", backquoteName(name))
	}
	s.dbs.mu.Lock()
	defer s.dbs.mu.Unlock()
	if s.dbs.names == nil {
		s.dbs.names = map[string]string{}
	}
	s.dbs.names[lower] = name
	return nil
}

// useDatabase runs USE.
func (s *Session) useDatabase(x *sql.Use) error {
	lower := strings.ToLower(x.Name.Name)
	if !s.dbs.exists(lower) {
		return fmt.Errorf("arrowstream: [SCHEMA_NOT_FOUND] The schema %s cannot be found", backquoteName(x.Name.Name))
	}
	s.dbs.mu.Lock()
	defer s.dbs.mu.Unlock()
	if lower == defaultDatabase {
		lower = ""
	}
	s.dbs.current = lower
	return nil
}

// dropDatabase runs DROP DATABASE: with CASCADE it drops the database's
// tables (stopping the streaming queries that write them, as DROP TABLE
// does); without, a database with tables is refused.
func (s *Session) dropDatabase(x *sql.DropDatabase) error {
	name := x.Name.Name
	lower := strings.ToLower(name)
	if lower == defaultDatabase {
		return fmt.Errorf("arrowstream: [UNSUPPORTED_FEATURE.DROP_DATABASE] Can not drop default database")
	}
	if !s.dbs.exists(lower) {
		if x.IfExists {
			return nil
		}
		return fmt.Errorf("arrowstream: [SCHEMA_NOT_FOUND] The schema %s cannot be found", backquoteName(name))
	}
	tables := s.databaseTables(lower)
	if len(tables) > 0 && !x.Cascade {
		return fmt.Errorf("arrowstream: [SCHEMA_NOT_EMPTY] Cannot drop a schema %s because it contains objects (%d tables); use DROP DATABASE ... CASCADE", backquoteName(name), len(tables))
	}
	for _, t := range tables {
		if err := s.dropTable(t, true); err != nil {
			return err
		}
	}
	s.dbs.mu.Lock()
	defer s.dbs.mu.Unlock()
	delete(s.dbs.names, lower)
	return nil
}

// inOtherDatabase reports whether the catalog key n is a table of a
// database other than default (or a global temporary view).
func (s *Session) inOtherDatabase(n string) bool {
	i := strings.IndexByte(n, '.')
	if i < 0 {
		return false
	}
	db := strings.ToLower(n[:i])
	return db == plan.GlobalTempDatabase || db != defaultDatabase && s.dbs.exists(db)
}

// checkDatabase refuses a new table in a database that does not exist
// (the current one after it was dropped).
func (s *Session) checkDatabase(db string) error {
	if db == "" || s.dbs.exists(db) {
		return nil
	}
	return fmt.Errorf("arrowstream: [SCHEMA_NOT_FOUND] The schema %s cannot be found", backquoteName(db))
}

// databaseTables lists the catalog keys of the tables of database lower.
func (s *Session) databaseTables(lower string) []string {
	var out []string
	prefix := lower + "."
	for _, n := range s.catalog.TableNames() {
		if strings.HasPrefix(strings.ToLower(n), prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// describeQuery runs DESCRIBE QUERY: the columns the query would answer
// with, without running it.
func (s *Session) describeQuery(ctx context.Context, x *sql.DescribeQuery) (*Result, error) {
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), s.confFor(ctx))
	if err != nil {
		return nil, err
	}
	st, err := plan.AnalyzeWith(x.Query, s.Catalog(), opts)
	if err != nil {
		return nil, err
	}
	q, ok := st.(*plan.QueryStatement)
	if !ok {
		return nil, fmt.Errorf("arrowstream: DESCRIBE QUERY: not a query")
	}
	return s.describeSchema(q.Plan.Schema())
}

// showColumns runs SHOW COLUMNS {IN|FROM} t [{IN|FROM} db]: the table's
// column names in col_name. A database given twice must agree
// ([SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE]); a temporary view has none.
func (s *Session) showColumns(x *sql.ShowColumns) (*Result, error) {
	parts := make([]string, len(x.Table))
	for i, p := range x.Table {
		parts[i] = p.Name
	}
	if x.Database != nil {
		db := x.Database.Name
		if q := parts; len(q) > 1 {
			if len(q) == 3 && strings.EqualFold(q[0], "spark_catalog") {
				q = q[1:]
			}
			if len(q) != 2 || !strings.EqualFold(q[0], db) {
				return nil, fmt.Errorf("arrowstream: [SHOW_COLUMNS_WITH_CONFLICT_NAMESPACE] SHOW COLUMNS with conflicting namespaces: %s != %s", backquoteName(strings.Join(parts[:len(parts)-1], ".")), backquoteName(db))
			}
		}
		parts = []string{db, parts[len(parts)-1]}
	}
	name := strings.Join(parts, ".")
	if len(parts) > 1 {
		// A qualified name is a database's table, never a temporary view.
		if key, db := s.tableKey(name); db == "" || !s.dbs.exists(db) && db != plan.GlobalTempDatabase {
			return nil, fmt.Errorf("arrowstream: [TABLE_OR_VIEW_NOT_FOUND] The table or view %s cannot be found: %w", backquoteName(name), plan.ErrTableNotFound)
		} else if t, err := s.catalog.Table(key); err == nil {
			if v, ok := t.(*plan.View); ok && !strings.Contains(v.Name, ".") {
				return nil, fmt.Errorf("arrowstream: [TABLE_OR_VIEW_NOT_FOUND] The table or view %s cannot be found: %w", backquoteName(name), plan.ErrTableNotFound)
			}
		}
	}
	t, err := s.Catalog().Table(name)
	if err != nil {
		return nil, err
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "col_name", Type: vector.String}}, nil)
	return s.rowsResult(schema, func(b *array.RecordBuilder) {
		for _, f := range t.Schema().Fields() {
			b.Field(0).(*array.StringBuilder).Append(f.Name)
		}
	})
}
