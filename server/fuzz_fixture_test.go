package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// The fuzz targets drive the Flight service in-process: the methods the
// gRPC server calls once its interceptors (panic recovery, authentication)
// have passed a call. Nothing listens; calls go through fake streams. A
// panic therefore fails the target instead of being turned into an
// Internal error by the recovery interceptor.

// fuzzEventsSchema is the schema of the fuzz catalog's ingest table.
var fuzzEventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// fuzzFixture is a server over a small catalog: the memory-sink table
// clicks (three epochs of epochSchema), the memory source events
// (fuzzEventsSchema, three rows) and the system tables, planned by the
// real SessionEngine. Commands (DDL) are refused, so that inputs cannot
// change the catalog or start queries: every input meets the same server.
type fuzzFixture struct {
	mem    *poisonmem.Allocator
	sess   *arrowstream.Session
	srv    *Server
	ingest *fuzzIngest
	// handle is an open prepared statement (SELECT over clicks) that
	// inputs can name by writing fuzzHandle.
	handle string
	// base and goroutines are the allocator's bytes and the goroutine
	// count before the current input (begin).
	base       int
	goroutines int
	// startRSS is the process's resident set once the fixture is built
	// (0: unknown), for checkRSS.
	startRSS int64
}

// fuzzHandle in an input is replaced by the fixture's prepared-statement
// handle (random per run, so a seed cannot hold it).
const fuzzHandle = "@HANDLE@"

// noExecEngine refuses commands: DDL would make inputs depend on each
// other (a table created by one input exists for the next) and could start
// streaming queries that outlive the input.
type noExecEngine struct{ QueryEngine }

func (noExecEngine) Exec(context.Context, Request) (int64, error) {
	return 0, status.Error(codes.PermissionDenied, "fuzz fixture: commands are not run")
}

func newFuzzFixture(f testing.TB) *fuzzFixture {
	f.Helper()
	mem := poisonmem.New()
	ctx := context.Background()
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: f.TempDir(), NoSync: true})
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	tab := newTable(f, mem, cat, "clicks", epochSchema, memsink.Options{})
	commitEpochs(f, mem, tab, 0, 3, 4)
	res, err := sess.SQL(ctx, "CREATE TABLE events (id BIGINT, name STRING, amount DOUBLE) USING memory")
	if err != nil {
		f.Fatal(err)
	}
	res.Close()
	src, _ := sess.LookupStream("events")
	if _, err := src.(*arrowstream.MemoryStream).AddData([]any{int64(1), "a", 1.5}, []any{int64(2), nil, 2.5}, []any{nil, "ü", nil}); err != nil {
		f.Fatal(err)
	}
	cfg := ForSession(sess, cat)
	cfg.Engine = noExecEngine{cfg.Engine}
	fi := &fuzzIngest{mem: mem}
	cfg.Ingest = fi
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Limits.QueryTimeout = 2 * time.Second
	// Fuzzed statements run under the memory limit a server would set: a
	// statement that allocates without bound fails with ResourceExhausted.
	cfg.Limits.QueryMemoryBytes = 64 << 20
	srv, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	fx := &fuzzFixture{mem: mem, sess: sess, srv: srv, ingest: fi}
	pr, err := srv.sql.CreatePreparedStatement(ctx, &pb.ActionCreatePreparedStatementRequest{Query: "SELECT epoch, i FROM clicks WHERE x > 0"})
	if err != nil {
		f.Fatal(err)
	}
	fx.handle = string(pr.Handle)
	f.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		if err := srv.Stop(sctx); err != nil {
			f.Error(err)
		}
		sess.Streams().StopAll()
		for _, n := range cat.List() {
			if tb, ok := cat.Drop(n); ok {
				tb.Close()
			}
		}
		if r, err := sess.SQL(context.Background(), "DROP TABLE IF EXISTS events"); err == nil {
			r.Close()
		}
		mem.AssertSize(f, 0)
	})
	fx.base = mem.CurrentAlloc()
	fx.goroutines = runtime.NumGoroutine()
	debug.FreeOSMemory()
	fx.startRSS, _ = selfRSS()
	return fx
}

// begin records the allocator's bytes and the goroutine count before an
// input, for check.
func (fx *fuzzFixture) begin() {
	fx.base = fx.mem.CurrentAlloc()
	fx.goroutines = runtime.NumGoroutine()
}

// watchdog crashes the fuzz worker when an input runs longer than d, so
// that the fuzzer records a hang as a failing input (it has no per-input
// timeout of its own). Call the returned function when the input ends.
func watchdog(d time.Duration, input any) func() {
	tm := time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		panic(fmt.Sprintf("input still running after %v: %q\n%s", d, input, buf[:runtime.Stack(buf, true)]))
	})
	return func() { tm.Stop() }
}

// withHandle replaces fuzzHandle in b by the fixture's handle.
func (fx *fuzzFixture) withHandle(b []byte) []byte {
	if !strings.Contains(string(b), fuzzHandle) {
		return b
	}
	return []byte(strings.ReplaceAll(string(b), fuzzHandle, fx.handle))
}

// check fails the input when it left Arrow memory allocated or goroutines
// running, or when err is a status a client must never see for bad input:
// Internal and Unknown mean a panic was recovered or a bug reported.
func (fx *fuzzFixture) check(t *testing.T, what string, err error) {
	t.Helper()
	checkCode(t, what, err)
	if n := fx.mem.CurrentAlloc(); n != fx.base {
		t.Fatalf("%s: %d Arrow bytes allocated after the call, %d before", what, n, fx.base)
	}
	// A return of memory to the OS the call started ends before the
	// goroutines are counted.
	fx.srv.ret.wg.Wait()
	fx.checkRSS(t, what)
	if g := goroutinesSettle(fx.goroutines, 2*time.Second); g > fx.goroutines {
		buf := make([]byte, 1<<16)
		t.Fatalf("%s: %d goroutines after the call, %d before:\n%s", what, g, fx.goroutines, buf[:runtime.Stack(buf, true)])
	}
}

// checkCode fails on a status a client must never see for bad input.
func checkCode(t *testing.T, what string, err error) {
	t.Helper()
	switch status.Code(err) {
	case codes.Internal, codes.Unknown:
		t.Fatalf("%s: %v", what, err)
	}
}

// fuzzIngest is the ingest target of the fixture: the events table backed
// by a fresh memory stream per input (the real memoryIngest), so that
// every input starts empty and what it appended can be inspected.
type fuzzIngest struct {
	mem    memory.Allocator
	stream *arrowstream.MemoryStream
}

func (fi *fuzzIngest) reset() *arrowstream.MemoryStream {
	fi.stream = arrowstream.NewMemoryStream(fi.mem, fuzzEventsSchema)
	return fi.stream
}

func (fi *fuzzIngest) LookupIngest(name string) (IngestTarget, bool) {
	if !strings.EqualFold(name, "events") || fi.stream == nil {
		return nil, false
	}
	return memoryIngest{fi.stream}, true
}

// fakeServerStream is the grpc.ServerStream part of the fake streams.
type fakeServerStream struct{ ctx context.Context }

func (s fakeServerStream) SetHeader(metadata.MD) error  { return nil }
func (s fakeServerStream) SendHeader(metadata.MD) error { return nil }
func (s fakeServerStream) SetTrailer(metadata.MD)       {}
func (s fakeServerStream) Context() context.Context     { return s.ctx }
func (s fakeServerStream) SendMsg(any) error            { return nil }
func (s fakeServerStream) RecvMsg(any) error            { return io.EOF }

var _ grpc.ServerStream = fakeServerStream{}

// fakePut is a DoPut stream: Recv replays in, Send collects the results.
type fakePut struct {
	fakeServerStream
	in      []*flight.FlightData
	results []*flight.PutResult
}

func (p *fakePut) Recv() (*flight.FlightData, error) {
	if len(p.in) == 0 {
		return nil, io.EOF
	}
	d := p.in[0]
	p.in = p.in[1:]
	return d, nil
}

func (p *fakePut) Send(r *flight.PutResult) error {
	p.results = append(p.results, r)
	return nil
}

// fakeGet is a DoGet stream that counts what it is sent.
type fakeGet struct {
	fakeServerStream
	messages int
}

func (g *fakeGet) Send(*flight.FlightData) error {
	g.messages++
	return nil
}

// flightCollector collects the FlightData a flight.Writer sends.
type flightCollector struct{ out []*flight.FlightData }

func (c *flightCollector) Send(d *flight.FlightData) error {
	// The writer reuses its FlightData and buffers for every message.
	c.out = append(c.out, &flight.FlightData{
		FlightDescriptor: d.FlightDescriptor,
		DataHeader:       bytes.Clone(d.DataHeader),
		DataBody:         bytes.Clone(d.DataBody),
		AppMetadata:      bytes.Clone(d.AppMetadata),
	})
	return nil
}

// flightMessages encodes recs as the FlightData of a DoPut: the schema
// message (carrying desc) and one message per record.
func flightMessages(t testing.TB, schema *arrow.Schema, desc *flight.FlightDescriptor, recs ...arrow.Record) []*flight.FlightData {
	t.Helper()
	var c flightCollector
	w := flight.NewRecordWriter(&c, ipc.WithSchema(schema))
	w.SetFlightDescriptor(desc)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 && len(c.out) == 0 {
		t.Fatal("no schema message written")
	}
	return c.out
}

// eventsRecord builds rows of fuzzEventsSchema; a nil value is a null.
func eventsRecord(mem memory.Allocator, rows ...[]any) arrow.Record {
	b := array.NewRecordBuilder(mem, fuzzEventsSchema)
	defer b.Release()
	for _, row := range rows {
		for c, v := range row {
			if v == nil {
				b.Field(c).AppendNull()
				continue
			}
			switch x := v.(type) {
			case int64:
				b.Field(c).(*array.Int64Builder).Append(x)
			case string:
				b.Field(c).(*array.StringBuilder).Append(x)
			case float64:
				b.Field(c).(*array.Float64Builder).Append(x)
			}
		}
	}
	return b.NewRecord()
}
