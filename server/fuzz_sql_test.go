package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// sqlSeeds are statements over the fuzz catalog (clicks: epoch, i, x;
// events: id, name, amount; system.streaming_queries) touching each part
// of the planner: projections, filters, aggregates, joins, sorting,
// windows, subqueries, set operations, functions, casts, commands and
// syntax errors.
var sqlSeeds = []string{
	"SELECT 1",
	"SELECT * FROM clicks",
	"SELECT epoch, count(*) AS n, sum(x), avg(i), min(x), max(i) FROM clicks GROUP BY epoch HAVING count(*) > 1 ORDER BY epoch DESC",
	"SELECT id, upper(name), amount * 2 FROM events WHERE name LIKE '_%' OR id IS NULL",
	"SELECT c.epoch, d.x FROM clicks c JOIN clicks d ON c.i = d.i",
	"SELECT c.epoch, d.x FROM clicks c LEFT OUTER JOIN clicks d ON c.i = d.epoch AND d.x > 1.0",
	"SELECT * FROM clicks WHERE i IN (SELECT epoch FROM clicks)",
	"SELECT DISTINCT epoch FROM clicks ORDER BY 1 LIMIT 2",
	"SELECT epoch FROM clicks UNION ALL SELECT i FROM clicks",
	"SELECT CAST(x AS STRING), CAST('12' AS BIGINT), CAST(CAST(x AS STRING) AS INT) FROM clicks",
	"SELECT coalesce(CAST(NULL AS STRING), 'none'), if(i > 1, 'big', 'small'), CASE WHEN x IS NULL THEN 0 ELSE x END FROM clicks",
	"SELECT i / 0, i % 0, 9223372036854775807 + i FROM clicks",
	"SELECT window(current_timestamp(), '1 minute') FROM clicks",
	"SELECT concat('a', CAST(i AS STRING)), length('ü'), substring('abc', 2, 1) FROM clicks",
	"SELECT count(DISTINCT epoch), sum(x) OVER (PARTITION BY epoch ORDER BY i) FROM clicks",
	"SELECT * FROM system.streaming_queries",
	"EXPLAIN SELECT epoch, sum(x) FROM clicks GROUP BY epoch",
	"SHOW TABLES",
	"DESCRIBE clicks",
	"CREATE TABLE t (a BIGINT) USING memory",
	"CREATE STREAMING TABLE s AS SELECT * FROM STREAM events",
	"DROP TABLE events",
	"SELECT * FROM nope",
	"SELECT nope FROM clicks",
	"SELECT * FROM STREAM events",
	"SELECT (((((((((((1)))))))))))",
	"SELECT 'unterminated",
	"SELECT ?",
	"SELECT x FROM clicks WHERE epoch = ?",
	"SELECT 1; SELECT 2",
	"",
	"\x00\xff",
}

// fuzzParams is a one-row parameter batch bound to prepared statements.
var fuzzParamsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "p0", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "p1", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// FuzzFlightSQLStatement runs one SQL text through the Flight SQL
// statement path (GetFlightInfo of a CommandStatementQuery, then DoGet of
// its endpoint; GetSchema) and the prepared-statement path (create, bind
// a parameter row with DoPut, GetFlightInfo, DoGet, close) on the fuzz
// catalog. Invariants: no panic, an error that is not Internal or a
// result, a bounded time (the server's query timeout is 2 s), and no Arrow
// bytes or goroutines left behind.
func FuzzFlightSQLStatement(f *testing.F) {
	fx := newFuzzFixture(f)
	for _, s := range sqlSeeds {
		f.Add(s)
	}
	params := func() arrow.Record {
		b := array.NewRecordBuilder(fx.mem, fuzzParamsSchema)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(2)
		b.Field(1).(*array.StringBuilder).Append("a")
		return b.NewRecord()
	}
	f.Fuzz(func(t *testing.T, text string) {
		// Flight SQL carries SQL in protobuf strings, which must be UTF-8
		// (the server's protobuf decoding refuses other bytes).
		text = strings.ToValidUTF8(text, "\uFFFD")
		defer watchdog(20*time.Second, text)()
		fx.begin()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		svc := fx.srv.svc

		desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyCmd(t, &pb.CommandStatementQuery{Query: text})}
		info, err := svc.GetFlightInfo(ctx, desc)
		fx.check(t, "GetFlightInfo", err)
		if err == nil {
			for _, ep := range info.GetEndpoint() {
				err := svc.DoGet(ep.GetTicket(), &fakeGet{fakeServerStream: fakeServerStream{ctx}})
				fx.check(t, "DoGet", err)
			}
		}
		_, err = svc.GetSchema(ctx, desc)
		fx.check(t, "GetSchema", err)

		res, err := fx.srv.sql.CreatePreparedStatement(ctx, &pb.ActionCreatePreparedStatementRequest{Query: text})
		fx.check(t, "CreatePreparedStatement", err)
		if err == nil {
			cmd := anyCmd(t, &pb.CommandPreparedStatementQuery{PreparedStatementHandle: res.Handle})
			pdesc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}
			rec := params()
			put := &fakePut{fakeServerStream: fakeServerStream{ctx}, in: flightMessages(t, fuzzParamsSchema, pdesc, rec)}
			rec.Release()
			// The statement holds the bound row until it is closed: only
			// the codes are checked before that.
			checkCode(t, "bind parameters", svc.DoPut(put))
			info, err := svc.GetFlightInfo(ctx, pdesc)
			checkCode(t, "GetFlightInfo of the prepared statement", err)
			if err == nil {
				for _, ep := range info.GetEndpoint() {
					err := svc.DoGet(ep.GetTicket(), &fakeGet{fakeServerStream: fakeServerStream{ctx}})
					checkCode(t, "DoGet of the prepared statement", err)
				}
			}
			err = fx.srv.sql.ClosePreparedStatement(ctx, &pb.ActionClosePreparedStatementRequest{PreparedStatementHandle: res.Handle})
			if err != nil {
				t.Fatalf("close the prepared statement: %v", err)
			}
			fx.check(t, "ClosePreparedStatement", nil)
		}
		if d := time.Since(start); d > testutil.Scaled(30*time.Second) {
			t.Fatalf("%q took %v, beyond the query timeout", text, d)
		}
	})
}
