package arrowstream

import (
	"context"
	"fmt"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"
)

// sqlValue runs a one-value query and returns its value formatted.
func sqlValue(t *testing.T, s *Session, q string) (string, error) {
	t.Helper()
	res, err := s.SQL(context.Background(), q)
	if err != nil {
		return "", err
	}
	defer res.Close()
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		return "", err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) != 1 || recs[0].NumRows() != 1 {
		t.Fatalf("%s: want one row", q)
	}
	return fmt.Sprint(vector.ValueAt(recs[0].Column(0), 0)), nil
}

// execSQL runs a statement and closes its result (SET answers with the
// setting's row).
func execSQL(s *Session, q string) error {
	res, err := s.SQL(context.Background(), q)
	if err != nil {
		return err
	}
	res.Close()
	return nil
}

// TestSQLSessionConf: spark.sql.ansi.enabled and spark.sql.session.timeZone
// by SET, by SetConf, and refused when invalid.
func TestSQLSessionConf(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: mem})
	if _, err := sqlValue(t, s, "SELECT CAST('abc' AS INT)"); err == nil || !strings.Contains(err.Error(), "[CAST_INVALID_INPUT]") {
		t.Fatalf("ANSI by default: got %v", err)
	}
	if err := execSQL(s, "SET spark.sql.ansi.enabled = false"); err != nil {
		t.Fatal(err)
	}
	if v, err := sqlValue(t, s, "SELECT CAST('abc' AS INT)"); err != nil || v != "<nil>" {
		t.Fatalf("ANSI off: got %v, %v", v, err)
	}
	if v, err := sqlValue(t, s, "SELECT 2147483647 + 1"); err != nil || v != "-2147483648" {
		t.Fatalf("ANSI off: got %v, %v", v, err)
	}
	s.SetConf("spark.sql.ansi.enabled", "true")
	if _, err := sqlValue(t, s, "SELECT 1 / 0"); err == nil || !strings.Contains(err.Error(), "[DIVIDE_BY_ZERO]") {
		t.Fatalf("ANSI on again: got %v", err)
	}
	if err := execSQL(s, "SET spark.sql.session.timeZone = 'America/Los_Angeles'"); err != nil {
		t.Fatal(err)
	}
	if v, err := sqlValue(t, s, "SELECT CAST(timestamp_seconds(0) AS STRING)"); err != nil || v != "1969-12-31 16:00:00" {
		t.Fatalf("time zone: got %v, %v", v, err)
	}
	for _, bad := range []string{"SET spark.sql.ansi.enabled = maybe", "SET spark.sql.session.timeZone = 'Nowhere/Land'"} {
		if err := execSQL(s, bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if v, err := sqlValue(t, s, "SELECT CAST(timestamp_seconds(0) AS STRING)"); err != nil || v != "1969-12-31 16:00:00" {
		t.Fatalf("a refused SET changed the time zone: got %v, %v", v, err)
	}
}

// TestStreamingTableANSIProperty: a streaming table's TBLPROPERTIES turn
// ANSI off for its query only; with ANSI on the same query fails.
func TestStreamingTableANSIProperty(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "1"}})
	sink := &collectsink.Sink{}
	s.RegisterSinkFormat("memory", func(context.Context, memory.Allocator, SinkInfo) (Sink, error) { return sink, nil })
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	start := func(name, props string) *StreamingQuery {
		res, err := s.SQL(ctx, "CREATE STREAMING TABLE "+name+" TBLPROPERTIES ('checkpointLocation' = '"+t.TempDir()+"'"+props+
			") AS SELECT value, value % 0 AS m FROM STREAM input")
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		return res.Query
	}
	legacy := start("legacy", ", 'spark.sql.ansi.enabled' = 'false'")
	defer legacy.Stop()
	ansi := start("ansi", "")
	defer ansi.Stop()
	addInts(t, src, 7)
	if err := legacy.ProcessAllAvailable(ctx); err != nil {
		t.Fatalf("ANSI off: %v", err)
	}
	if err := ansi.ProcessAllAvailable(ctx); err == nil || !strings.Contains(err.Error(), "DIVIDE_BY_ZERO") {
		t.Fatalf("ANSI on: got %v, want DIVIDE_BY_ZERO", err)
	}
	if rows := sink.All(); len(rows) != 1 || rows[0][1] != nil {
		t.Fatalf("ANSI off: rows %v, want [7 <nil>]", rows)
	}
}
