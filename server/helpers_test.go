package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// epochSchema is the schema of most test tables: the epoch that wrote a
// row, its index within the epoch, and a double.
var epochSchema = arrow.NewSchema([]arrow.Field{
	{Name: "epoch", Type: vector.Int64},
	{Name: "i", Type: vector.Int64},
	{Name: "x", Type: vector.Float64},
}, nil)

// newTable creates a memory-sink table and registers it in cat.
func newTable(t testing.TB, mem memory.Allocator, cat *memsink.Catalog, name string, schema *arrow.Schema, opts memsink.Options) *memsink.Table {
	t.Helper()
	tab, err := memsink.New(mem, arrowstream.SinkInfo{QueryName: name, Schema: schema, Mode: arrowstream.Append}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cat != nil {
		if err := cat.Register(name, tab); err != nil {
			t.Fatal(err)
		}
	}
	return tab
}

// epochRecord builds rows [from, from+n) of an epoch with epochSchema.
func epochRecord(mem memory.Allocator, epoch int64, from, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, epochSchema)
	defer b.Release()
	e := b.Field(0).(*array.Int64Builder)
	ib := b.Field(1).(*array.Int64Builder)
	xb := b.Field(2).(*array.Float64Builder)
	e.Reserve(n)
	ib.Reserve(n)
	xb.Reserve(n)
	for i := from; i < from+n; i++ {
		e.UnsafeAppend(epoch)
		ib.UnsafeAppend(int64(i))
		xb.UnsafeAppend(float64(i) / 2)
	}
	return b.NewRecord()
}

// commit writes recs (owned, released here) as epoch.
func commit(t testing.TB, tab *memsink.Table, epoch int64, recs ...arrow.Record) {
	t.Helper()
	if err := commitErr(tab, epoch, recs...); err != nil {
		t.Fatal(err)
	}
}

func commitErr(tab *memsink.Table, epoch int64, recs ...arrow.Record) error {
	scan, err := vector.NewScan(tab.Schema(), recs...)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		return err
	}
	return tab.AddBatch(context.Background(), epoch, scan)
}

// commitEpochs writes epochs [from, to) of rows rows each.
func commitEpochs(t testing.TB, mem memory.Allocator, tab *memsink.Table, from, to int64, rows int) {
	t.Helper()
	for e := from; e < to; e++ {
		commit(t, tab, e, epochRecord(mem, e, 0, rows))
	}
}

// testLogger shows warnings and errors only.
var testLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// startServer starts a server on a loopback port with cfg (Addr, Sinks and
// Logger filled in when empty) and stops it when the test ends.
func startServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Sinks == nil {
		cfg.Sinks = memsink.NewCatalog()
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// flightClient connects a plain Flight client to s.
func flightClient(t testing.TB, s *Server, opts ...grpc.DialOption) flight.Client {
	t.Helper()
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes))}, opts...)
	c, err := flight.NewClientWithMiddleware(s.Addr().String(), nil, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAll reads a DoGet stream into records (owned by the caller) and
// returns them with the stream's schema.
func readAll(ctx context.Context, c flight.Client, ticket []byte) (*arrow.Schema, []arrow.Record, error) {
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		return nil, nil, err
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		return nil, nil, err
	}
	defer rdr.Release()
	var out []arrow.Record
	for rdr.Next() {
		r := rdr.Record()
		r.Retain()
		out = append(out, r)
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		releaseAll(out)
		return nil, nil, err
	}
	return rdr.Schema(), out, nil
}

// epochCounts counts rows per value of the "epoch" column.
func epochCounts(recs []arrow.Record) (map[int64]int, int) {
	m := map[int64]int{}
	total := 0
	for _, r := range recs {
		idx := r.Schema().FieldIndices("epoch")
		if len(idx) == 0 {
			continue
		}
		for _, e := range r.Column(idx[0]).(*array.Int64).Int64Values() {
			m[e]++
			total++
		}
	}
	return m, total
}

// checkWholeEpochs fails unless every epoch present has exactly perEpoch
// rows.
func checkWholeEpochs(recs []arrow.Record, perEpoch int) error {
	m, _ := epochCounts(recs)
	for e, n := range m {
		if n != perEpoch {
			return fmt.Errorf("epoch %d has %d rows, want %d (a partial epoch)", e, n, perEpoch)
		}
	}
	return nil
}

// wantCode fails unless err has the gRPC code.
func wantCode(t testing.TB, err error, code codes.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	if got := status.Code(err); got != code {
		t.Fatalf("got %s (%v), want %s", got, err, code)
	}
}

// waitFor polls cond until it holds or d passes; d is a bound for a hang,
// not for a slow machine: it is at least a minute, and scaled.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(max(d, time.Minute)))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goroutinesSettle waits until the goroutine count is at most n.
func goroutinesSettle(n int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		g := runtime.NumGoroutine()
		if g <= n || time.Now().After(deadline) {
			return g
		}
		time.Sleep(20 * time.Millisecond)
	}
}
