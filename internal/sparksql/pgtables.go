package sparksql

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/vector"
)

// pgTable is one of the tables SQLQueryTestSuite.createTestTables loads
// from Spark's PostgreSQL test data: a tab-separated file without a header,
// read by Spark's CSV reader with a user schema.
type pgTable struct {
	name   string
	file   string // under the test-data/postgresql directory
	schema *arrow.Schema
}

// pgTables are the suite's aggtest, onek and tenk1, with the schemas it
// gives them (onek and tenk1 share the PostgreSQL regression suite's
// layout).
var pgTables = []pgTable{
	{"aggtest", "agg.data", intColumns([]string{"a"}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Float32, Nullable: true})},
	{"onek", "onek.data", tenkSchema()},
	{"tenk1", "tenk.data", tenkSchema()},
}

// tenkSchema is the schema of onek and tenk1: thirteen int columns and
// three strings.
func tenkSchema() *arrow.Schema {
	ints := []string{"unique1", "unique2", "two", "four", "ten", "twenty", "hundred", "thousand",
		"twothousand", "fivethous", "tenthous", "odd", "even"}
	var strs []arrow.Field
	for _, n := range []string{"stringu1", "stringu2", "string4"} {
		strs = append(strs, arrow.Field{Name: n, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	return intColumns(ints, strs...)
}

// intColumns is a schema of nullable int columns named ints followed by
// rest (a CSV column read with a user schema is nullable, as in Spark).
func intColumns(ints []string, rest ...arrow.Field) *arrow.Schema {
	var fields []arrow.Field
	for _, n := range ints {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	}
	return arrow.NewSchema(append(fields, rest...), nil)
}

// PostgresDataDir is the directory of Spark's PostgreSQL test data beside a
// sql-tests directory (Spark's tree keeps sql-tests/ and
// test-data/postgresql/ side by side under src/test/resources), or "" when
// there is none.
func PostgresDataDir(sqlTests string) string {
	dir := filepath.Join(filepath.Dir(filepath.Clean(sqlTests)), "test-data", "postgresql")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

// createPostgresTables registers aggtest, onek and tenk1 from the files in
// dir, read as the suite reads them (CSV, delimiter tab, no header, the
// user schema; Spark's defaults otherwise: an empty field is null, a
// blank line no row). A table whose file is absent is left out
// (its queries then fail as in a tree without the data); an empty dir
// registers nothing.
func createPostgresTables(ctx context.Context, s *arrowstream.Session, mem memory.Allocator, dir string) error {
	if dir == "" {
		return nil
	}
	for _, t := range pgTables {
		path := filepath.Join(dir, t.file)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		recs, err := readTabFile(ctx, mem, path, t.schema)
		if err != nil {
			return fmt.Errorf("sparksql: test table %s from %s: %w", t.name, path, err)
		}
		err = s.RegisterTable(t.name, t.schema, recs...)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			return fmt.Errorf("sparksql: test table %s: %w", t.name, err)
		}
	}
	return nil
}

// readTabFile reads one tab-separated file without a header with the
// engine's CSV file source.
func readTabFile(ctx context.Context, mem memory.Allocator, path string, schema *arrow.Schema) ([]arrow.Record, error) {
	src, err := files.SourceFormat(files.CSV)(mem, schema, map[string]string{
		"path": path, "delimiter": "\t", "header": "false",
	})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	bs, ok := src.(arrowstream.BatchSource)
	if !ok {
		return nil, fmt.Errorf("the csv source cannot be read as a batch")
	}
	op, err := bs.ReadBatch(ctx)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	return vector.Drain(ctx, op)
}
