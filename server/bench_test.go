package server

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/memsink"
)

const benchRows = 10_000_000

// bareServer is the baseline: arrow-go's Flight server with default
// options, whose DoGet writes the given records as arrow-go's examples do.
type bareServer struct {
	flight.BaseFlightServer
	schema *arrow.Schema
	recs   []arrow.Record
}

func (b *bareServer) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	w := flight.NewRecordWriter(stream, ipc.WithSchema(b.schema))
	defer w.Close()
	for _, r := range b.recs {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func startBare(b testing.TB, schema *arrow.Schema, recs []arrow.Record) string {
	srv := flight.NewServerWithMiddleware(nil)
	srv.RegisterFlightService(&bareServer{schema: schema, recs: recs})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv.InitListener(lis)
	go srv.Serve()
	b.Cleanup(srv.Shutdown)
	return lis.Addr().String()
}

// drain reads a DoGet stream to the end and returns its rows.
func drain(ctx context.Context, c flight.Client, ticket []byte) (int64, error) {
	stream, err := c.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		return 0, err
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		n += rdr.Record().NumRows()
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	return n, nil
}

func dial(b testing.TB, addr string) flight.Client {
	c, err := flight.NewClientWithMiddleware(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// benchTable is a 10M-row memory-sink table (three 8-byte columns, ten
// epochs) in its own catalog.
func benchTable(b testing.TB) (*memsink.Catalog, *memsink.Table) {
	cat := memsink.NewCatalog()
	tab := newTable(b, memory.DefaultAllocator, cat, "big", epochSchema, memsink.Options{})
	for e := range 10 {
		commit(b, tab, int64(e), epochRecord(memory.DefaultAllocator, int64(e), e*benchRows/10, benchRows/10))
	}
	b.Cleanup(func() { tab.Close() })
	return cat, tab
}

// BenchmarkDoGet10M streams a 10M-row table from the server and, in the
// same iteration, the same records from a bare arrow-go Flight server;
// order alternates between iterations. Reports rows/s of both and the
// median per-iteration ratio (goal ≥ 0.9).
func BenchmarkDoGet10M(b *testing.B) {
	cat, tab := benchTable(b)
	snap := tab.Snapshot()
	defer snap.Release()
	s := startServer(b, Config{Sinks: cat})
	ours := dial(b, s.Addr().String())
	bare := dial(b, startBare(b, epochSchema, snap.Records()))
	ticket, _ := TableTicket("big")
	ctx := context.Background()
	var tOurs, tBare time.Duration
	var ratios []float64
	run := func(c flight.Client) time.Duration {
		start := time.Now()
		n, err := drain(ctx, c, ticket)
		d := time.Since(start)
		if err != nil || n != benchRows {
			b.Fatalf("read %d rows: %v", n, err)
		}
		return d
	}
	b.ResetTimer()
	for i := range b.N {
		var o, r time.Duration
		if i%2 == 0 {
			o = run(ours)
			r = run(bare)
		} else {
			r = run(bare)
			o = run(ours)
		}
		tOurs += o
		tBare += r
		ratios = append(ratios, r.Seconds()/o.Seconds())
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(benchRows)*float64(b.N)/tOurs.Seconds(), "rows/s")
	b.ReportMetric(float64(benchRows)*float64(b.N)/tBare.Seconds(), "bare_rows/s")
	// The median of per-iteration ratios: each pair runs back to back, so
	// it is less sensitive to the machine's noise than the totals.
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
}

// BenchmarkSmallQueryLatencyUnderLoad measures a small Flight SQL query
// (GetFlightInfo + DoGet of a 100-row table through the test engine) while
// another client streams the 10M-row table without pause. Reports p50 and
// p99 in microseconds.
func BenchmarkSmallQueryLatencyUnderLoad(b *testing.B) {
	cat, _ := benchTable(b)
	small := newTable(b, memory.DefaultAllocator, cat, "small", epochSchema, memsink.Options{})
	commit(b, small, 0, epochRecord(memory.DefaultAllocator, 0, 0, 100))
	b.Cleanup(func() { small.Close() })
	eng := newTestEngine(cat, memory.DefaultAllocator, nil)
	s := startServer(b, Config{Sinks: cat, Engine: eng})
	loader := dial(b, s.Addr().String())
	ticket, _ := TableTicket("big")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			drain(ctx, loader, ticket)
		}
	}()
	defer func() { cancel(); wg.Wait() }()
	cl, err := flightsql.NewClient(s.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	time.Sleep(100 * time.Millisecond) // let the load start
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		for range 100 {
			start := time.Now()
			info, err := cl.Execute(context.Background(), "SELECT * FROM small")
			if err != nil {
				b.Fatal(err)
			}
			rdr, err := cl.DoGet(context.Background(), info.Endpoint[0].Ticket)
			if err != nil {
				b.Fatal(err)
			}
			n := int64(0)
			for rdr.Next() {
				n += rdr.Record().NumRows()
			}
			rdr.Release()
			lat = append(lat, time.Since(start))
			if n != 100 {
				b.Fatalf("%d rows", n)
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50_us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_us")
}
