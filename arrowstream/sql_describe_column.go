package arrowstream

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// columnStatNames are the statistics DESC EXTENDED t col lists after the
// column's name, type and comment, in Spark's order (DescribeColumnCommand).
// The engine computes no column statistics (it has no ANALYZE TABLE), so
// every value is NULL, as Spark shows them for a table never analyzed.
var columnStatNames = []string{"min", "max", "num_nulls", "distinct_count", "avg_col_len", "max_col_len", "histogram"}

// describeStmt answers DESC [TABLE] [EXTENDED|FORMATTED] t [col].
func (s *Session) describeStmt(x *sql.Describe) (*Result, error) {
	name := identName(x.Name)
	if x.Column != nil {
		return s.describeColumn(name, x)
	}
	if x.Option != "" {
		// Spark adds the table's details (database, owner, creation
		// time, provider, location, properties), which the engine does
		// not keep: refused rather than answered with the columns alone.
		return nil, fmt.Errorf("arrowstream: DESCRIBE %s %s: the table details of %s are not supported (the engine keeps no owner, location or properties); DESCRIBE %s lists its columns: %w", x.Option, name, x.Option, name, plan.ErrUnsupported)
	}
	return s.describe(name)
}

// describeColumn answers DESC t col as Spark's DescribeColumnCommand: rows
// of info_name and info_value (col_name, data_type, comment; with
// EXTENDED or FORMATTED also the column statistics). The column may be
// qualified by the table's name or a suffix of it (t.col, db.t.col); a
// field of a struct column (col.x) is refused, as Spark refuses it.
func (s *Session) describeColumn(table string, x *sql.Describe) (*Result, error) {
	t, err := s.Catalog().Table(table)
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(x.Column))
	for i, id := range x.Column {
		parts[i] = id.Name
	}
	written := strings.Join(parts, ".")
	field, ok := columnOf(t.Schema(), x.Name, parts)
	if !ok {
		if len(parts) > 1 {
			if _, isCol := columnOf(t.Schema(), x.Name, parts[:1]); isCol {
				return nil, fmt.Errorf("arrowstream: DESC TABLE COLUMN does not support nested column: %s: %w", written, plan.ErrUnsupported)
			}
		}
		return nil, fmt.Errorf("arrowstream: DESCRIBE %s: column %s does not exist: %w", table, backquoteName(written), plan.ErrUnresolved)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "info_name", Type: vector.String},
		{Name: "info_value", Type: vector.String},
	}, nil)
	return s.rowsResult(schema, func(b *array.RecordBuilder) {
		add := func(k, v string) {
			b.Field(0).(*array.StringBuilder).Append(k)
			b.Field(1).(*array.StringBuilder).Append(v)
		}
		add("col_name", field.Name)
		add("data_type", vector.TypeName(field.Type))
		// The engine keeps no column comments; Spark writes a missing
		// one, and missing statistics, as the text NULL.
		add("comment", "NULL")
		if x.Option != "" {
			for _, n := range columnStatNames {
				add(n, "NULL")
			}
		}
	})
}

// columnOf finds the column parts name in schema (names compare without
// case, as Spark's default resolution): one part is a column's name;
// more are a qualifier that must be the trailing parts of the table's
// name as written, then the column's name.
func columnOf(schema *arrow.Schema, table []sql.Ident, parts []string) (arrow.Field, bool) {
	qual, col := parts[:len(parts)-1], parts[len(parts)-1]
	if len(qual) > len(table) {
		return arrow.Field{}, false
	}
	for i, q := range qual {
		if !strings.EqualFold(q, table[len(table)-len(qual)+i].Name) {
			return arrow.Field{}, false
		}
	}
	for _, f := range schema.Fields() {
		if strings.EqualFold(f.Name, col) {
			return f, true
		}
	}
	return arrow.Field{}, false
}
