package sparksql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSuiteUDF: Spark's test UDF keeps its argument's value and type
// (CAST(f(CAST(x AS STRING)) AS typeof(x))), names its column udf(x),
// takes one argument, and is never a constant; booleq, boolne and vol are
// the PostgreSQL suite's functions.
func TestSuiteUDF(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, Conf: map[string]string{"spark.sql.session.timeZone": DefaultTimeZone}})
	defer closeSession(s)
	if err := registerFunctions(s, append([]string{"udf"}, pgFunctions...)); err != nil {
		t.Fatal(err)
	}
	r := &Runner{}
	fm := Formatter{Loc: mustZone(t, DefaultTimeZone)}
	cases := []struct{ sql, types, row string }{
		{"SELECT udf(1), udf(2L), udf('a'), udf(1.50), udf(2.5D), udf(true)", "int,bigint,string,decimal(3,2),double,boolean", "1\t2\ta\t1.50\t2.5\ttrue"},
		{"SELECT udf(CAST(NULL AS INT)), udf(DATE'2020-01-31'), udf(TIMESTAMP'2020-01-31 10:00:01.5')", "int,date,timestamp", "NULL\t2020-01-31\t2020-01-31 10:00:01.5"},
		{"SELECT udf(k) FROM VALUES (1), (NULL) AS t(k) WHERE udf(k) IS NOT NULL", "int", "1"},
		{"SELECT booleq(true, false), boolne(true, false), booleq(NULL, true), vol('x')", "boolean,boolean,boolean,string", "false\ttrue\tNULL\tx"},
	}
	for _, c := range cases {
		rows, schema, err := r.query(context.Background(), s, fm, c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		var types []string
		for _, f := range schema.Fields() {
			types = append(types, vector.TypeName(f.Type))
		}
		if got := strings.Join(types, ","); got != c.types || len(rows) != 1 || rows[0] != c.row {
			t.Errorf("%s: types %s rows %q, want %s %q", c.sql, got, rows, c.types, c.row)
		}
	}
	_, schema, err := r.query(context.Background(), s, fm, "SELECT udf(k) FROM VALUES (1) AS t(k)")
	if err != nil || schema.Field(0).Name != "udf(k)" {
		t.Errorf("column name: %v %v, want udf(k)", schema, err)
	}
	for sql, want := range map[string]string{
		"SELECT udf(1, 2)":       "WRONG_NUM_ARGS",
		"SELECT 1 LIMIT udf(1)":  "limit expression must be an integer constant",
		"SELECT udf(array(1))":   "array",
		"SELECT booleq(1, true)": "UNEXPECTED_INPUT_TYPE",
	} {
		if _, _, err := r.query(context.Background(), s, fm, sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", sql, err, want)
		}
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
