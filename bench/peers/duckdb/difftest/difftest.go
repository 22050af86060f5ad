// Package difftest is the third oracle of the main module's differential
// tester (internal/difftest): it runs the generator's queries, restricted
// to the subset of the dialect where Spark and DuckDB agree
// (difftest.Options.DuckDB), in Arrowstream and in DuckDB over the same
// tables, and reports every query whose answers differ. Numbers are
// compared by value (difftest.LooseRow): the engines type some results
// differently (avg of a decimal, sum of a bigint). A query that raises an
// error in either engine is counted, not compared (Spark's ANSI mode and
// DuckDB overflow in different places: sum(int) is a bigint in Spark, a
// hugeint in DuckDB).
package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	dt "github.com/arrowstream/arrowstream/internal/difftest"
)

// Stats counts what was checked.
type Stats struct {
	Cases, Queries, Compared, EngineErrors, DuckErrors, Mismatches int
}

func (s Stats) String() string {
	return fmt.Sprintf("cases=%d queries=%d compared=%d engine-errors=%d duckdb-errors=%d mismatches=%d",
		s.Cases, s.Queries, s.Compared, s.EngineErrors, s.DuckErrors, s.Mismatches)
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Cases += o.Cases
	s.Queries += o.Queries
	s.Compared += o.Compared
	s.EngineErrors += o.EngineErrors
	s.DuckErrors += o.DuckErrors
	s.Mismatches += o.Mismatches
}

// Options returns the generator options of this oracle.
func Options() dt.Options { return dt.Options{DuckDB: true, QueriesPerCase: 10} }

// Check generates the case of seed in the DuckDB subset and compares
// every query's answer in both engines.
func Check(ctx context.Context, seed uint64) ([]*dt.Mismatch, Stats, error) {
	c := dt.Generate(seed, Options())
	st := Stats{Cases: 1}
	eng, err := dt.NewEngine(c.Tables)
	if err != nil {
		return nil, st, err
	}
	defer eng.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, st, fmt.Errorf("opening DuckDB: %w", err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, st, err
	}
	defer conn.Close()
	for _, t := range c.Tables {
		for _, stmt := range strings.SplitAfter(t.CreateSQL(dt.DuckDB), ";\n") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return nil, st, fmt.Errorf("loading table %s into DuckDB: %w\n%s", t.Name, err, stmt)
			}
		}
	}
	var found []*dt.Mismatch
	for _, q := range c.Queries {
		st.Queries++
		spark, duck := q.Render(dt.Spark), q.Render(dt.DuckDB)
		ours := eng.Run(ctx, spark, true)
		theirs, derr := duckRows(ctx, conn, duck)
		switch {
		case ours.Panic != "":
			st.Mismatches++
			found = append(found, &dt.Mismatch{Oracle: dt.OraclePanic, Seed: seed, Tables: c.Tables, Query: spark, Got: ours})
			continue
		case ours.Err != nil:
			st.EngineErrors++
			continue
		case derr != nil:
			st.DuckErrors++
			continue
		}
		st.Compared++
		a, b := loose(ours.Rows), loose(theirs)
		if !same(a, b, q.OrderBy) {
			st.Mismatches++
			found = append(found, &dt.Mismatch{Oracle: dt.OracleDuckDB, Seed: seed, Tables: c.Tables, Query: spark,
				Other: duck, Want: dt.Result{Rows: theirs}, Got: ours,
				Comment: "reference: DuckDB (query under 'compared with'); engine: Arrowstream; numbers compared by value"})
		}
	}
	return found, st, nil
}

func loose(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = dt.LooseRow(r)
	}
	return out
}

func same(a, b []string, ordered bool) bool {
	if len(a) != len(b) {
		return false
	}
	if !ordered {
		a, b = sortedCopy(a), sortedCopy(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// duckRows runs q in DuckDB and renders its rows in the canonical form of
// the engine's rows.
func duckRows(ctx context.Context, conn *sql.Conn, q string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	var out []string
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		cells := make([]string, len(cols))
		for i, v := range vals {
			cells[i] = canonical(v, cols[i].DatabaseTypeName())
		}
		out = append(out, strings.Join(cells, " | "))
	}
	return out, rows.Err()
}

// canonical renders a DuckDB value as difftest.Canonical renders the
// engine's.
func canonical(v any, typeName string) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		return fmt.Sprint(x)
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case *big.Int:
		return x.String()
	case float32:
		return dt.CanonicalFloat(float64(x))
	case float64:
		return dt.CanonicalFloat(x)
	case string:
		return fmt.Sprintf("%q", x)
	case duckdb.Decimal:
		f := new(big.Float).SetPrec(256).SetInt(x.Value)
		scale := new(big.Float).SetPrec(256).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		f.Quo(f, scale)
		return dt.CanonicalDecimal(f.Text('f', int(x.Scale)))
	case time.Time:
		if typeName == "DATE" {
			return x.UTC().Format("2006-01-02")
		}
		return dt.CanonicalTime(x.UTC())
	}
	return fmt.Sprintf("%v", v)
}
