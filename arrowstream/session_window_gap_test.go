package arrowstream

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// gapEventSchema is (key, t seconds, gap string).
var gapEventSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: vector.Int64, Nullable: true},
	{Name: "t", Type: vector.Int64, Nullable: true},
	{Name: "gap", Type: vector.String, Nullable: true},
}, nil)

// TestSessionWindowDynamicGap runs session_window(ts, gapExpr) with a gap
// per row, in the DataFrame form (a string column) and the SQL form (a
// CASE giving interval strings), with a restart after every epoch or
// none: each row's session is [t, t+gap), sessions merge as with a fixed
// gap (the merged end is the largest end), rows whose gap is null, zero,
// negative or not an interval are dropped, and a row is late when its own
// session end is at or before the late watermark.
func TestSessionWindowDynamicGap(t *testing.T) {
	const sqlQuery = `SELECT key, CAST(session_window.start AS BIGINT) AS st, CAST(session_window.end AS BIGINT) AS en, count(*) AS n
		FROM STREAM events WATERMARK timestamp_seconds(t) AS eventTime DELAY OF INTERVAL 20 SECONDS
		GROUP BY key, session_window(eventTime, CASE WHEN gap IS NULL THEN NULL WHEN key = 3 THEN '3 seconds' ELSE gap END)`
	forms := []struct {
		name  string
		query func(s *Session) *DataFrame
	}{
		{"dataframe", func(s *Session) *DataFrame {
			return s.ReadStream("events").
				WithColumn("eventTime", "timestamp_seconds(t)").
				WithWatermark("eventTime", "20 seconds").
				GroupBy("key", "session_window(eventTime, gap) AS session").Agg("count(*) AS n").
				Select("key", "CAST(session.start AS BIGINT) AS st", "CAST(session.end AS BIGINT) AS en", "n")
		}},
		{"sql", func(s *Session) *DataFrame { return s.SQLDataFrame(sqlQuery) }},
	}
	type ev struct {
		key, t int64
		gap    any
	}
	epochs := []struct {
		events []ev
		want   []vt.Row
	}{
		{[]ev{{1, 0, "10 seconds"}, {1, 12, "5 seconds"}, {2, 0, nil}, {2, 1, "0 seconds"}}, nil},
		// [8,12) overlaps [0,10) and touches [12,17): one session [0,17).
		{[]ev{{1, 8, "4 seconds"}, {2, 2, "-1 seconds"}, {2, 3, "soon"}, {2, 4, "1 second"}}, nil},
		// Key 3's gap is 3 s in the SQL form (the CASE), 30 s in the column.
		{[]ev{{3, 20, "30 seconds"}}, nil},
		// The watermark moves to 80: every session closes.
		{[]ev{{9, 100, "1 second"}}, []vt.Row{{1, 0, 17, 3}, {2, 4, 5, 1}}},
		// Late by the row's own session end (≤ 80): [70,75) is dropped,
		// [70,90) is kept; the watermark moves to 180.
		{[]ev{{4, 70, "20 seconds"}, {5, 70, "5 seconds"}, {9, 200, "1 second"}}, []vt.Row{{4, 70, 90, 1}, {9, 100, 101, 1}}},
	}
	for _, form := range forms {
		for _, restart := range []bool{false, true} {
			t.Run(form.name+map[bool]string{false: "", true: "/restart"}[restart], func(t *testing.T) {
				ctx := context.Background()
				s, mem := newTestSession(t)
				src := NewMemoryStream(mem, gapEventSchema)
				defer src.Close()
				s.RegisterStream("events", src)
				dir := t.TempDir()
				sink := &collectsink.Sink{}
				got := &newRows{sink: sink}
				start := func() *StreamingQuery {
					q, err := form.query(s).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
					if err != nil {
						t.Fatal(err)
					}
					return q
				}
				q := start()
				defer func() { q.Stop() }()
				for i, e := range epochs {
					if restart && i > 0 {
						q.Stop()
						q = start()
					}
					rows := make([][]any, len(e.events))
					for j, x := range e.events {
						rows[j] = []any{x.key, x.t, x.gap}
					}
					if _, err := src.AddData(rows...); err != nil {
						t.Fatal(err)
					}
					if err := q.ProcessAllAvailable(ctx); err != nil {
						t.Fatal(err)
					}
					want := e.want
					if i == 3 && form.name == "sql" {
						want = append(want, vt.Row{3, 20, 23, 1})
					} else if i == 3 {
						want = append(want, vt.Row{3, 20, 50, 1})
					}
					if rows := got.take(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(rows)) {
						t.Fatalf("epoch %d:\n%swant\n%s", i, vt.FormatRows(rows), vt.FormatRows(want))
					}
				}
			})
		}
	}
}

// TestSessionWindowGapType: a gap expression that is neither an interval
// nor a string is refused at analysis, naming the expression.
func TestSessionWindowGapType(t *testing.T) {
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, gapEventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	err := s.ReadStream("events").
		WithColumn("eventTime", "timestamp_seconds(t)").
		GroupBy("key", "session_window(eventTime, key) AS session").Agg("count(*) AS n").Err()
	if err == nil || !strings.Contains(err.Error(), "gap duration") || !strings.Contains(err.Error(), "key") {
		t.Fatalf("want a gap type error naming key, got %v", err)
	}
}
