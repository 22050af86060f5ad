package pgwire

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/vector"
)

var testLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

// fixture is a session with the memory sink, its Flight SQL server and a
// PostgreSQL endpoint over it, on loopback ports.
type fixture struct {
	mem  memory.Allocator
	sess *arrowstream.Session
	cat  *memsink.Catalog
	srv  *server.Server
	pg   *Server
}

type fixtureOpts struct {
	server func(*server.Config)
	pg     func(*Config)
}

func startFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true})
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	t.Cleanup(func() {
		sess.Streams().StopAll()
		for _, n := range cat.List() {
			if tb, ok := cat.Drop(n); ok {
				tb.Close()
			}
		}
		for _, lt := range sess.LocalTables() {
			sess.SQL(context.Background(), "DROP TABLE IF EXISTS "+lt.Name)
		}
	})
	cfg := server.ForSession(sess, cat)
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = testLogger
	if o.server != nil {
		o.server(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	pcfg := Config{Addr: "127.0.0.1:0"}
	if o.pg != nil {
		o.pg(&pcfg)
	}
	pg, err := New(srv.Frontend(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := pg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		if err := pg.Stop(ctx); err != nil {
			t.Error(err)
		}
		if err := srv.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return &fixture{mem: mem, sess: sess, cat: cat, srv: srv, pg: pg}
}

// dsn is a connection string for user (no password when pw is "").
func (f *fixture) dsn(user, pw string, extra string) string {
	s := fmt.Sprintf("postgres://%s@%s/arrowstream?sslmode=disable", user, f.pg.Addr())
	if pw != "" {
		s = fmt.Sprintf("postgres://%s:%s@%s/arrowstream?sslmode=disable", user, pw, f.pg.Addr())
	}
	if extra != "" {
		s += "&" + extra
	}
	return s
}

// addTable registers a memory-sink table holding recs (owned, released)
// as one epoch.
func (f *fixture) addTable(t testing.TB, name string, schema *arrow.Schema, recs ...arrow.Record) *memsink.Table {
	t.Helper()
	tab, err := memsink.New(f.mem, arrowstream.SinkInfo{QueryName: name, Schema: schema, Mode: arrowstream.Append}, memsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.cat.Register(name, tab); err != nil {
		t.Fatal(err)
	}
	scan, err := vector.NewScan(schema, recs...)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.AddBatch(context.Background(), 0, scan); err != nil {
		t.Fatal(err)
	}
	return tab
}

// typesSchema has a column of every type the endpoint sends.
var typesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "i2", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i4", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "f4", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
	{Name: "f8", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "n", Type: &arrow.Decimal128Type{Precision: 12, Scale: 3}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "by", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "tstz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "iv", Type: &arrow.DurationType{Unit: arrow.Microsecond}, Nullable: true},
	{Name: "js", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}), Nullable: true},
	{Name: "arr", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
	{Name: "sarr", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
}, nil)

// typesRow is one row of typesSchema as Go values (nil: NULL).
type typesRow struct {
	id   int64
	b    bool
	i2   int16
	i4   int32
	f4   float32
	f8   float64
	n    string // decimal text
	s    string
	by   []byte
	d    time.Time
	ts   time.Time
	tstz time.Time
	iv   time.Duration
	js   int64
	arr  []int64
	sarr []string
}

var typesRows = []typesRow{
	{1, true, -7, 123456, 1.5, -2.25e100, "1234.567", "héllo, \"world\"", []byte{0, 1, 0xfe}, date(2024, 2, 29), stamp(2024, 2, 29, 13, 14, 15, 123456), stamp(1999, 12, 31, 23, 59, 59, 0),
		90*time.Minute + 500*time.Millisecond, 5, []int64{1, 2, 3}, []string{"a", "b c", ""}},
	{2, false, 32767, -2147483648, -0.125, 0.1, "-0.001", "", []byte{}, date(1970, 1, 1), stamp(2000, 1, 1, 0, 0, 0, 0), stamp(1960, 6, 1, 12, 0, 0, 1),
		-3 * time.Second, -1, []int64{}, []string{"NULL", "{x}"}},
}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
func stamp(y int, m time.Month, d, h, mi, s, us int) time.Time {
	return time.Date(y, m, d, h, mi, s, us*1000, time.UTC)
}

// typesRecord builds typesRows plus a row of NULLs (id 3).
func typesRecord(mem memory.Allocator) arrow.Record {
	b := array.NewRecordBuilder(mem, typesSchema)
	defer b.Release()
	for _, r := range typesRows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		b.Field(1).(*array.BooleanBuilder).Append(r.b)
		b.Field(2).(*array.Int16Builder).Append(r.i2)
		b.Field(3).(*array.Int32Builder).Append(r.i4)
		b.Field(4).(*array.Float32Builder).Append(r.f4)
		b.Field(5).(*array.Float64Builder).Append(r.f8)
		n, err := decimal128.FromString(r.n, 12, 3)
		if err != nil {
			panic(err)
		}
		b.Field(6).(*array.Decimal128Builder).Append(n)
		b.Field(7).(*array.StringBuilder).Append(r.s)
		b.Field(8).(*array.BinaryBuilder).Append(r.by)
		b.Field(9).(*array.Date32Builder).Append(arrow.Date32FromTime(r.d))
		b.Field(10).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMicro()))
		b.Field(11).(*array.TimestampBuilder).Append(arrow.Timestamp(r.tstz.UnixMicro()))
		b.Field(12).(*array.DurationBuilder).Append(arrow.Duration(r.iv.Microseconds()))
		sb := b.Field(13).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Int64Builder).Append(r.js)
		lb := b.Field(14).(*array.ListBuilder)
		lb.Append(true)
		for _, v := range r.arr {
			lb.ValueBuilder().(*array.Int64Builder).Append(v)
		}
		slb := b.Field(15).(*array.ListBuilder)
		slb.Append(true)
		for _, v := range r.sarr {
			slb.ValueBuilder().(*array.StringBuilder).Append(v)
		}
	}
	b.Field(0).(*array.Int64Builder).Append(3)
	for i := 1; i < len(b.Fields()); i++ {
		b.Field(i).AppendNull()
	}
	return b.NewRecord()
}
