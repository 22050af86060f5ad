package pgwire

import (
	"context"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/server"
)

// psql's describe commands (\dt, \d NAME, \l) send queries over
// pg_catalog that use PostgreSQL's own operators and functions (~,
// OPERATOR(pg_catalog.~), regclass casts, pg_table_is_visible, ...). They
// are recognized here by the catalog relations and columns they read and
// answered from the tables the session's user may see (the same list as
// Flight SQL's GetTables); a query over another pg_catalog relation (the
// policies, statistics, publications and inheritance psql asks about)
// has no rows here and gets an empty answer.

// tableOID is the OID a table is reported with: stable for a name within
// a listing (16384 + its rank, as user relations start there).
const firstUserOID = 16384

type catalogTable struct {
	oid    int
	schema string
	info   server.TableInfo
}

func (c *conn) catalogTables() ([]catalogTable, error) {
	tabs, err := c.sess.Tables(context.Background())
	if err != nil {
		return nil, err
	}
	sort.SliceStable(tabs, func(i, j int) bool {
		if tabs[i].DBSchema != tabs[j].DBSchema {
			return tabs[i].DBSchema < tabs[j].DBSchema
		}
		return tabs[i].Name < tabs[j].Name
	})
	out := make([]catalogTable, len(tabs))
	for i, t := range tabs {
		out[i] = catalogTable{oid: firstUserOID + i, schema: t.DBSchema, info: t}
	}
	return out, nil
}

var (
	reRelname = regexp.MustCompile(`(?i)c\.relname\s+(?:OPERATOR\(pg_catalog\.~\)|~)\s+'((?:[^']|'')*)'`)
	reOID     = regexp.MustCompile(`(?i)(?:c\.oid|a\.attrelid)\s*=\s*'(\d+)'`)
)

// catalogQuery answers psql's catalog queries.
func (c *conn) catalogQuery(text string) (*localResult, bool, error) {
	lower := strings.ToLower(text)
	if !strings.Contains(lower, "pg_catalog.") {
		return nil, false, nil
	}
	switch {
	case strings.Contains(lower, "from pg_catalog.pg_database d"):
		return rowsResult([]string{"Name", "Owner", "Encoding", "Collate", "Ctype", "ICU Locale", "Locale Provider", "Access privileges"},
			[][]string{{databaseName, databaseName, "UTF8", "C", "C", "", "libc", ""}}), true, nil
	case strings.Contains(lower, "pg_catalog.pg_get_userbyid(c.relowner)") && strings.Contains(lower, "from pg_catalog.pg_class c"):
		tabs, err := c.matching(text)
		if err != nil {
			return nil, true, err
		}
		var rows [][]string
		for _, t := range tabs {
			rows = append(rows, []string{t.schema, t.info.Name, "table", databaseName})
		}
		return rowsResult([]string{"Schema", "Name", "Type", "Owner"}, rows), true, nil
	case strings.Contains(lower, "select c.oid,") && strings.Contains(lower, "c.relname") && strings.Contains(lower, "from pg_catalog.pg_class c"):
		tabs, err := c.matching(text)
		if err != nil {
			return nil, true, err
		}
		var rows [][]string
		for _, t := range tabs {
			rows = append(rows, []string{strconv.Itoa(t.oid), t.schema, t.info.Name})
		}
		return rowsResult([]string{"oid", "nspname", "relname"}, rows), true, nil
	case strings.Contains(lower, "select c.relchecks, c.relkind"):
		t, ok, err := c.byOID(text)
		if err != nil || !ok {
			return emptyResult(), true, err
		}
		_ = t
		return rowsResult([]string{"relchecks", "relkind", "relhasindex", "relhasrules", "relhastriggers", "relrowsecurity",
			"relforcerowsecurity", "relhasoids", "relispartition", "reloptions", "reltablespace", "reloftype", "relpersistence", "relreplident", "amname"},
			[][]string{{"0", "r", "f", "f", "f", "f", "f", "f", "f", "", "0", "", "p", "d", "heap"}}), true, nil
	case strings.Contains(lower, "from pg_catalog.pg_attribute a") && strings.Contains(lower, "a.attname"):
		t, ok, err := c.byOID(text)
		if err != nil || !ok {
			return emptyResult(), true, err
		}
		var rows [][]string
		for _, f := range t.info.Schema.Fields() {
			name := "text"
			if pt, err := typeOf(f.Type); err == nil {
				name = pt.name
			}
			rows = append(rows, []string{f.Name, name, "", boolText(!f.Nullable), "", "", ""})
		}
		return rowsResult([]string{"attname", "format_type", "default", "attnotnull", "attcollation", "attidentity", "attgenerated"}, rows), true, nil
	case strings.Contains(lower, "from pg_catalog."):
		// Another catalog relation: nothing of that kind exists here.
		if strings.Contains(lower, "pg_catalog.pg_class") || strings.Contains(lower, "pg_catalog.pg_policy") ||
			strings.Contains(lower, "pg_catalog.pg_statistic_ext") || strings.Contains(lower, "pg_catalog.pg_publication") ||
			strings.Contains(lower, "pg_catalog.pg_inherits") || strings.Contains(lower, "pg_catalog.pg_constraint") ||
			strings.Contains(lower, "pg_catalog.pg_trigger") || strings.Contains(lower, "pg_catalog.pg_index") {
			return emptyResult(), true, nil
		}
	}
	return nil, false, nil
}

// matching is the tables whose name matches the relname regex of text
// (all without one).
func (c *conn) matching(text string) ([]catalogTable, error) {
	tabs, err := c.catalogTables()
	if err != nil {
		return nil, err
	}
	m := reRelname.FindStringSubmatch(text)
	if m == nil {
		return tabs, nil
	}
	re, err := regexp.Compile(strings.ReplaceAll(m[1], "''", "'"))
	if err != nil {
		return nil, &pgError{code: "2201B", msg: "invalid regular expression: " + err.Error()}
	}
	var out []catalogTable
	for _, t := range tabs {
		if re.MatchString(t.info.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// byOID finds the table whose OID text compares with.
func (c *conn) byOID(text string) (catalogTable, bool, error) {
	m := reOID.FindStringSubmatch(text)
	if m == nil {
		return catalogTable{}, false, nil
	}
	oid, _ := strconv.Atoi(m[1])
	tabs, err := c.catalogTables()
	if err != nil {
		return catalogTable{}, false, err
	}
	for _, t := range tabs {
		if t.oid == oid {
			return t, true, nil
		}
	}
	return catalogTable{}, false, nil
}

func boolText(b bool) string {
	if b {
		return "t"
	}
	return "f"
}

func emptyResult() *localResult {
	return rowsResult([]string{"?column?"}, nil)
}

// rowsResult is a text result of the given rows.
func rowsResult(cols []string, rows [][]string) *localResult {
	fields := make([]arrow.Field, len(cols))
	for i, n := range cols {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			b.Field(i).(*array.StringBuilder).Append(v)
		}
	}
	return &localResult{rows: b.NewRecord()}
}
