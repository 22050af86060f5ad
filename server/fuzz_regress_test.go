package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
)

// Regression tests of the fuzzers' findings, and checks that the fuzz
// fixture serves real results (so that the targets are not vacuous).

// TestFuzzFixtureServesResults: a query through the fixture's statement
// path streams data, the prepared statement binds, and a good batch is
// ingested.
func TestFuzzFixtureServesResults(t *testing.T) {
	fx := newFuzzFixture(t)
	ctx := context.Background()
	fx.begin()
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyCmd(t, &pb.CommandStatementQuery{Query: "SELECT * FROM clicks c JOIN clicks d ON c.i = d.i"})}
	info, err := fx.srv.svc.GetFlightInfo(ctx, desc)
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGet{fakeServerStream: fakeServerStream{ctx}}
	if err := fx.srv.svc.DoGet(info.Endpoint[0].Ticket, g); err != nil || g.messages < 2 {
		t.Fatalf("DoGet sent %d messages, %v", g.messages, err)
	}
	fx.check(t, "query", nil)

	stream := fx.ingest.reset()
	defer stream.Close()
	rec := eventsRecord(fx.mem, []any{int64(1), "a", 1.0}, []any{int64(2), "b", 2.0})
	defer rec.Release()
	put := &fakePut{fakeServerStream: fakeServerStream{ctx},
		in: flightMessages(t, fuzzEventsSchema, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"events"}}, rec, rec)}
	if err := fx.srv.svc.DoPut(put); err != nil {
		t.Fatal(err)
	}
	if n := lastAcked(t, put.results); n != 4 {
		t.Fatalf("acknowledged %d rows, want 4", n)
	}
	checkIngested(t, stream, 4)
}

// putOne pushes msgs into the events table with the plain Flight DoPut
// and returns the error and the table's rows afterwards.
func putOne(t *testing.T, fx *fuzzFixture, msgs []*flight.FlightData) (error, int64) {
	t.Helper()
	stream := fx.ingest.reset()
	defer stream.Close()
	msgs[0].FlightDescriptor = &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"events"}}
	put := &fakePut{fakeServerStream: fakeServerStream{context.Background()}, in: msgs}
	err := fx.srv.svc.DoPut(put)
	acked := lastAcked(t, put.results)
	checkIngested(t, stream, acked)
	return err, acked
}

// TestDoPutSchemaWithHugeFieldCount is the finding of seed
// testdata/fuzz/FuzzDoPutIngest/476ff292976065b8: a schema message whose
// fields vector claims ~10⁹ entries made arrow-go's IPC reader allocate
// them at once and the process die of "fatal error: out of memory".
// Also a record batch naming a buffer far beyond its body (the reader
// allocated the claimed size before reading).
func TestDoPutSchemaWithHugeFieldCount(t *testing.T) {
	fx := newFuzzFixture(t)
	one := eventsRecord(fx.mem, []any{int64(1), "a", 1.0})
	defer one.Release()
	for _, tc := range []struct {
		name  string
		patch func(msgs []*flight.FlightData)
		want  string
	}{
		{"schema fields", func(msgs []*flight.FlightData) {
			c := fbCheck{b: msgs[0].DataHeader}
			msg, _ := c.root()
			hdr, _ := c.tableField(msg, 2)
			start, _, _ := c.vectorField(hdr, 1, 4)
			binary.LittleEndian.PutUint32(msgs[0].DataHeader[start-4:], 1<<30)
		}, "a vector of 1073741824 elements does not fit in the message"},
		{"buffer length", func(msgs []*flight.FlightData) {
			c := fbCheck{b: msgs[1].DataHeader}
			msg, _ := c.root()
			rb, _ := c.tableField(msg, 2)
			start, _, _ := c.vectorField(rb, 2, 16)
			binary.LittleEndian.PutUint64(msgs[1].DataHeader[start+8:], 1<<40)
		}, "record batch buffer 0 (offset 0, 1099511627776 bytes) is outside the"},
		{"empty header", func(msgs []*flight.FlightData) {
			msgs[1].DataHeader = nil
		}, "DoPut message 2 has no IPC data header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx.begin()
			msgs := flightMessages(t, fuzzEventsSchema, nil, one)
			tc.patch(msgs)
			err, rows := putOne(t, fx, msgs)
			wantCode(t, err, codes.InvalidArgument)
			if !strings.Contains(err.Error(), tc.want) || rows != 0 {
				t.Fatalf("got %v with %d rows, want %q and none", err, rows, tc.want)
			}
			fx.check(t, tc.name, nil)
		})
	}
}

// TestDoPutBatchListsTooFewBuffers is the finding of seed
// testdata/fuzz/FuzzDoPutIngest/17fe38b0287ac671: arrow-go's IPC reader
// takes a record batch's i-th buffer for the schema's i-th buffer without
// checking that the batch lists that many, reads the bytes after the list
// as a buffer's offset and length, and allocated the 206 GB they said
// (fatal out of memory). A batch must list the nodes and buffers of its
// schema's layout.
func TestDoPutBatchListsTooFewBuffers(t *testing.T) {
	fx := newFuzzFixture(t)
	one := eventsRecord(fx.mem, []any{int64(1), "a", 1.0})
	defer one.Release()
	fx.begin()
	msgs := flightMessages(t, fuzzEventsSchema, nil, one, one)
	c := fbCheck{b: msgs[2].DataHeader}
	msg, _ := c.root()
	rb, _ := c.tableField(msg, 2)
	start, n, _ := c.vectorField(rb, 2, 16)
	if n != 7 {
		t.Fatalf("a batch of (bigint, string, double) lists %d buffers, want 7", n)
	}
	binary.LittleEndian.PutUint32(msgs[2].DataHeader[start-4:], 2)
	err, rows := putOne(t, fx, msgs)
	wantCode(t, err, codes.InvalidArgument)
	want := "DoPut message 3: the record batch describes 3 field nodes and 2 buffers, its schema's columns have 3 and 7"
	if !strings.Contains(err.Error(), want) || rows != 1 {
		t.Fatalf("got %v with %d rows, want %q and the first batch's row", err, rows, want)
	}
	fx.check(t, "put", nil)
}

// TestDoPutRejectsMalformedBatches: batches arrow-go's IPC reader accepts
// but that are not well-formed (invalid UTF-8, decreasing offsets, a null
// count that is not the bitmap's) are rejected with InvalidArgument
// naming the column and row; the batch before stays, nothing of the bad
// one is appended.
func TestDoPutRejectsMalformedBatches(t *testing.T) {
	fx := newFuzzFixture(t)
	one := eventsRecord(fx.mem, []any{int64(1), "a", 1.0})
	defer one.Release()
	for _, bad := range badIngestBatches(t, fx) {
		t.Run(bad.name, func(t *testing.T) {
			defer bad.rec.Release()
			fx.begin()
			err, rows := putOne(t, fx, flightMessages(t, fuzzEventsSchema, nil, one, bad.rec))
			wantCode(t, err, codes.InvalidArgument)
			if !strings.Contains(err.Error(), "batch 1 (after 1 rows) is malformed") || !strings.Contains(err.Error(), bad.want) || rows != 1 {
				t.Fatalf("got %v with %d rows, want %q and 1 row", err, rows, bad.want)
			}
		})
	}
}

// TestBulkIngestBareDescriptor is the finding of seed
// testdata/fuzz/FuzzDoPutIngest/c568430b32cd7d0f: a Flight SQL bulk
// ingest whose first message is a bare descriptor (no IPC header) failed
// with a panic in arrow-go's delayed schema read (recovered as Internal by
// the interceptor); it is InvalidArgument.
func TestBulkIngestBareDescriptor(t *testing.T) {
	fx := newFuzzFixture(t)
	stream := fx.ingest.reset()
	defer stream.Close()
	fx.begin()
	cmd := anyCmd(t, &pb.CommandStatementIngest{Table: "events"})
	put := &fakePut{fakeServerStream: fakeServerStream{context.Background()},
		in: []*flight.FlightData{{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd}}}}
	err := fx.srv.svc.DoPut(put)
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "the stream has no schema") {
		t.Fatal(err)
	}
	fx.check(t, "bulk ingest", nil)
}

// TestFrameMessagesRoundTrip: the ingest fuzz framing decodes what it
// encodes, and clips lengths that run past the input.
func TestFrameMessagesRoundTrip(t *testing.T) {
	in := []*flight.FlightData{{DataHeader: []byte("head"), DataBody: []byte("body")}, {DataHeader: []byte("h2")}}
	out := unframeMessages(frameMessages(in), nil)
	if len(out) != 2 || !bytes.Equal(out[0].DataHeader, in[0].DataHeader) || !bytes.Equal(out[0].DataBody, in[0].DataBody) || !bytes.Equal(out[1].DataHeader, in[1].DataHeader) {
		t.Fatalf("round trip: %v", out)
	}
	if out := unframeMessages([]byte{200, 0, 0, 0, 'x'}, nil); len(out) != 1 || string(out[0].DataHeader) != "x" {
		t.Fatalf("clipped: %v", out)
	}
}

// TestDoPutStringOffsetPastDataLeaksNothing is the finding of seed
// testdata/fuzz/FuzzDoPutIngest/7bf9e3df7deb0f7f: a string column whose
// last offset points past its data buffer made arrow-go's array
// constructor panic inside the IPC reader, which recovered but leaked the
// buffers it had read (192 bytes per batch on the server's allocator).
// The batch is refused before arrow-go builds arrays; nothing leaks.
func TestDoPutStringOffsetPastDataLeaksNothing(t *testing.T) {
	fx := newFuzzFixture(t)
	one := eventsRecord(fx.mem, []any{int64(1), "a", 1.0})
	defer one.Release()
	fx.begin()
	msgs := flightMessages(t, fuzzEventsSchema, nil, one, one)
	// Buffers of (id, name, amount): validity, values; validity,
	// offsets, data; validity, values. Point name's last offset past
	// its one byte of data.
	c := fbCheck{b: msgs[2].DataHeader}
	msg, _ := c.root()
	rb, _ := c.tableField(msg, 2)
	start, _, _ := c.vectorField(rb, 2, 16)
	offsAt := int64(binary.LittleEndian.Uint64(msgs[2].DataHeader[start+16*3:]))
	binary.LittleEndian.PutUint32(msgs[2].DataBody[offsAt+4:], 1000)
	err, rows := putOne(t, fx, msgs)
	wantCode(t, err, codes.InvalidArgument)
	want := `DoPut message 3: column "name": last offset 1000 is outside the 1-byte data buffer`
	if !strings.Contains(err.Error(), want) || rows != 1 {
		t.Fatalf("got %v with %d rows, want %q and the first batch's row", err, rows, want)
	}
	fx.check(t, "put", nil)
}

// readIngestSeed reads the data of a FuzzDoPutIngest corpus file.
func readIngestSeed(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzDoPutIngest", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if q, ok := strings.CutPrefix(line, "[]byte("); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
			if err != nil {
				t.Fatal(err)
			}
			return []byte(s)
		}
	}
	t.Fatalf("%s holds no []byte value", name)
	return nil
}

// TestDoPutBigEndianStreamRefused is the finding of seed
// testdata/fuzz/FuzzDoPutIngest/04dbf85a8bbfc082: a schema flagged
// big-endian makes arrow-go byte-swap every buffer after loading it, so
// offsets the layout check had read as little-endian became out of bounds
// (a recovered panic, leaking the buffers read). Big-endian streams are
// refused.
func TestDoPutBigEndianStreamRefused(t *testing.T) {
	fx := newFuzzFixture(t)
	fx.begin()
	err, rows := putOne(t, fx, unframeMessages(readIngestSeed(t, "04dbf85a8bbfc082"), nil))
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "DoPut message 1: IPC message header: big-endian IPC is not accepted") || rows != 0 {
		t.Fatalf("got %v with %d rows", err, rows)
	}
	fx.check(t, "put", nil)
}

// TestDoPutChecksAcceptEveryLayout: the DoPut checks pass well-formed
// batches of every accepted layout (bound as parameters, which have no
// fixed schema), whole and sliced, and refuse a dictionary batch with a
// message saying so.
func TestDoPutChecksAcceptEveryLayout(t *testing.T) {
	fx := newFuzzFixture(t)
	all := allLayoutsRecord(t, fx.mem)
	defer all.Release()
	plain := array.NewRecord(arrow.NewSchema(all.Schema().Fields()[:5], nil), all.Columns()[:5], all.NumRows())
	defer plain.Release()
	slice := plain.NewSlice(2, 7)
	defer slice.Release()
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: anyCmd(t, &pb.CommandPreparedStatementQuery{PreparedStatementHandle: []byte(fx.handle)})}
	bind := func(schema *arrow.Schema, recs ...arrow.Record) error {
		put := &fakePut{fakeServerStream: fakeServerStream{context.Background()}, in: flightMessages(t, schema, desc, recs...)}
		return fx.srv.svc.DoPut(put)
	}
	if err := bind(plain.Schema(), plain, slice); err != nil {
		t.Fatalf("well-formed parameters refused: %v", err)
	}
	fx.checkBoundParams(t)
	p, _ := fx.srv.sql.prepared.get([]byte(fx.handle), "")
	bound := p.paramsSnapshot()
	releaseAll(bound)
	if len(bound) != 2 {
		t.Fatalf("%d parameter batches bound, want 2", len(bound))
	}
	p.setParams(nil)
	err := bind(all.Schema(), all)
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "dictionary batches are not accepted") {
		t.Fatal(err)
	}
}
