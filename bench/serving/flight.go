package serving

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/ysb"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/vector"
)

// bareFlight is the serving peer: arrow-go's Flight server with default
// options whose DoGet writes the given records, no engine behind it.
type bareFlight struct {
	flight.BaseFlightServer
	schema *arrow.Schema
	recs   []arrow.Record
}

func (b *bareFlight) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	w := flight.NewRecordWriter(stream, ipc.WithSchema(b.schema))
	defer w.Close()
	for _, r := range b.recs {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Workload is "flight": Flight DoGet of a memory-sink table of YSB events
// through Arrowstream's server, beside a bare arrow Flight server serving
// the same records.
func Workload() harness.Workload {
	return harness.Workload{Name: "flight", Description: "Flight DoGet of a memory-sink table of YSB events, beside a bare arrow Flight server", Run: runFlight}
}

// runFlight serves a memory-sink table of YSB events through Arrowstream's
// Flight server and the same records through a bare Flight server, and
// reads each back with a Flight client on loopback, alternating: bulk rows/s
// of the whole table and p50/p99 of a DoGet of a small (YSB result-sized)
// table.
func runFlight(ctx context.Context, cfg harness.Config) ([]harness.Figure, error) {
	rows, reps := 8<<20, 3
	if cfg.Quick {
		rows, reps = 1<<20, 2
	}
	d := ysb.Generate(rows, ysb.EventsPerSecond, cfg.Seed)
	// The process's peak RSS (server, peer and client in one process) and
	// the Arrow allocators' peaks (the tables', loaded first and then only
	// read, plus the server's own: its default allocator, a pool over
	// mapped memory, with the peak measured under the pool) from the
	// tables' loading to the last read.
	rss := harness.StartRSS()
	peak := harness.NewPeakAllocator(memory.NewGoAllocator())
	var mem memory.Allocator = peak
	srvPeak := harness.NewPeakAllocator(vector.NewMappedAllocator())
	srvMem := vector.NewPoolAllocator(srvPeak, 0)
	defer srvMem.Close()
	cat := memsink.NewCatalog()
	big, err := sinkTable(ctx, mem, cat, "events", d, 0, d.Len(), 8)
	if err != nil {
		return nil, err
	}
	defer big.Close()
	small, err := sinkTable(ctx, mem, cat, "small", d, 0, 200, 1)
	if err != nil {
		return nil, err
	}
	defer small.Close()
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Sinks: cat, Allocator: srvMem, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Stop(sctx)
	}()
	bigSnap, smallSnap := big.Snapshot(), small.Snapshot()
	defer bigSnap.Release()
	defer smallSnap.Release()
	bareBig, stopBig, err := startBare(ysb.Schema(ysb.Plain), bigSnap.Records())
	if err != nil {
		return nil, err
	}
	defer stopBig()
	bareSmall, stopSmall, err := startBare(ysb.Schema(ysb.Plain), smallSnap.Records())
	if err != nil {
		return nil, err
	}
	defer stopSmall()
	ours, err := dialFlight(srv.Addr().String())
	if err != nil {
		return nil, err
	}
	defer ours.Close()
	bareBigC, err := dialFlight(bareBig)
	if err != nil {
		return nil, err
	}
	defer bareBigC.Close()
	bareSmallC, err := dialFlight(bareSmall)
	if err != nil {
		return nil, err
	}
	defer bareSmallC.Close()
	bigTicket, err := server.TableTicket("events")
	if err != nil {
		return nil, err
	}
	smallTicket, err := server.TableTicket("small")
	if err != nil {
		return nil, err
	}
	timeGet := func(c flight.Client, ticket []byte, want int64) (time.Duration, error) {
		start := time.Now()
		n, err := drainFlight(ctx, c, ticket)
		if err == nil && n != want {
			err = fmt.Errorf("read %d rows, want %d", n, want)
		}
		return time.Since(start), err
	}
	var oursBulk, bareBulk []float64
	for i := range reps {
		var o, b time.Duration
		var errO, errB error
		if i%2 == 0 {
			o, errO = timeGet(ours, bigTicket, int64(d.Len()))
			b, errB = timeGet(bareBigC, nil, int64(d.Len()))
		} else {
			b, errB = timeGet(bareBigC, nil, int64(d.Len()))
			o, errO = timeGet(ours, bigTicket, int64(d.Len()))
		}
		if err := errors.Join(errO, errB); err != nil {
			return nil, fmt.Errorf("flight bulk DoGet: %w", err)
		}
		oursBulk = append(oursBulk, float64(d.Len())/o.Seconds())
		bareBulk = append(bareBulk, float64(d.Len())/b.Seconds())
	}
	var oursLat, bareLat []time.Duration
	for i := range 200 {
		o, errO := timeGet(ours, smallTicket, 200)
		b, errB := timeGet(bareSmallC, nil, 200)
		if err := errors.Join(errO, errB); err != nil {
			return nil, fmt.Errorf("flight small DoGet %d: %w", i, err)
		}
		oursLat, bareLat = append(oursLat, o), append(bareLat, b)
	}
	ob, bb := harness.Median(oursBulk), harness.Median(bareBulk)
	ms := func(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
	figs := []harness.Figure{
		{Workload: "flight-doget", Figure: "throughput", Value: ob, Unit: "rows/s"},
		{Workload: "flight-doget", Figure: "throughput", Value: bb, Unit: "rows/s", Peer: "flight-bare", Ratio: ob / bb},
	}
	for _, wl := range []string{"flight-doget", "flight-doget-small"} {
		figs = append(figs, harness.Figure{Workload: wl, Figure: "peak_memory", Value: float64(peak.Peak() + srvPeak.Peak()), Unit: "bytes"})
		figs = append(figs, harness.RSSFigure(wl, rss)...)
	}
	for _, p := range []float64{50, 99} {
		o, b := ms(harness.Percentile(oursLat, p)), ms(harness.Percentile(bareLat, p))
		name := fmt.Sprintf("latency_p%.0f", p)
		figs = append(figs,
			harness.Figure{Workload: "flight-doget-small", Figure: name, Value: o, Unit: "ms"},
			harness.Figure{Workload: "flight-doget-small", Figure: name, Value: b, Unit: "ms", Peer: "flight-bare", Ratio: b / o})
	}
	return figs, nil
}

// sinkTable commits events [lo, hi) into a new Append memory-sink table
// registered in cat, in the given number of epochs.
func sinkTable(ctx context.Context, mem memory.Allocator, cat *memsink.Catalog, name string, d *ysb.Data, lo, hi, epochs int) (*memsink.Table, error) {
	t, err := memsink.New(mem, arrowstream.SinkInfo{QueryName: name, Schema: ysb.Schema(ysb.Plain), Mode: arrowstream.Append}, memsink.Options{})
	if err != nil {
		return nil, err
	}
	if err := cat.Register(name, t); err != nil {
		t.Close()
		return nil, err
	}
	per := (hi - lo + epochs - 1) / epochs
	for e := range epochs {
		a, b := lo+e*per, min(lo+(e+1)*per, hi)
		if a >= b {
			break
		}
		recs := d.Records(mem, ysb.Plain, a, b, 64<<10)
		scan, err := vector.NewScan(ysb.Schema(ysb.Plain), recs...)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			t.Close()
			return nil, err
		}
		if err := t.AddBatch(ctx, int64(e), scan); err != nil {
			t.Close()
			return nil, fmt.Errorf("ysb: committing epoch %d of table %s: %w", e, name, err)
		}
	}
	return t, nil
}

func startBare(schema *arrow.Schema, recs []arrow.Record) (addr string, stop func(), err error) {
	srv := flight.NewServerWithMiddleware(nil)
	srv.RegisterFlightService(&bareFlight{schema: schema, recs: recs})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv.InitListener(lis)
	go srv.Serve()
	return lis.Addr().String(), srv.Shutdown, nil
}

func dialFlight(addr string) (flight.Client, error) {
	return flight.NewClientWithMiddleware(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(server.DefaultMaxMessageBytes)))
}

// drainFlight reads a DoGet stream to the end and returns its rows.
func drainFlight(ctx context.Context, c flight.Client, ticket []byte) (int64, error) {
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
