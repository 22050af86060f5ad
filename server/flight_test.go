package server

import (
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

func TestListFlightsGetFlightInfoGetSchema(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	cat := memsink.NewCatalog()
	clicks := newTable(t, mem, cat, "clicks", epochSchema, memsink.Options{})
	defer clicks.Close()
	views := newTable(t, mem, cat, "views", epochSchema, memsink.Options{})
	defer views.Close()
	commitEpochs(t, mem, clicks, 0, 3, 100)
	commitEpochs(t, mem, views, 0, 1, 7)

	s := startServer(t, Config{Sinks: cat})
	c := flightClient(t, s)
	ctx := context.Background()

	list, err := c.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for {
		info, err := list.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows[info.FlightDescriptor.Path[0]] = info.TotalRecords
		if info.TotalBytes <= 0 {
			t.Errorf("%s: TotalBytes %d", info.FlightDescriptor.Path[0], info.TotalBytes)
		}
	}
	if rows["clicks"] != 300 || rows["views"] != 7 || len(rows) != 2 {
		t.Fatalf("ListFlights rows = %v", rows)
	}

	// A LIKE pattern filters.
	list, err = c.ListFlights(ctx, &flight.Criteria{Expression: []byte("CLI%")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, err := list.Recv(); err != nil {
			break
		}
		n++
	}
	if n != 1 {
		t.Fatalf("ListFlights CLI%%: %d flights, want 1", n)
	}

	info, err := c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"clicks"}})
	if err != nil {
		t.Fatal(err)
	}
	if info.TotalRecords != 300 {
		t.Fatalf("TotalRecords %d", info.TotalRecords)
	}
	schema, err := flight.DeserializeSchema(info.Schema, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.Equal(epochSchema) {
		t.Fatalf("schema %s", schema)
	}
	if v, _ := schema.Metadata().GetValue(EpochMetadataKey); v != "2" {
		t.Fatalf("epoch metadata %q, want 2", v)
	}
	// The endpoint's ticket reads the table.
	_, recs, err := readAll(ctx, c, info.Endpoint[0].Ticket.Ticket)
	if err != nil {
		t.Fatal(err)
	}
	if _, total := epochCounts(recs); total != 300 {
		t.Fatalf("DoGet of the endpoint: %d rows", total)
	}
	releaseAll(recs)

	sr, err := c.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"views"}})
	if err != nil {
		t.Fatal(err)
	}
	if schema, err = flight.DeserializeSchema(sr.Schema, mem); err != nil || !schema.Equal(epochSchema) {
		t.Fatalf("GetSchema: %v %v", schema, err)
	}

	// Epoch descriptors are JSON tickets in a CMD descriptor.
	cmd, _ := SinceTicket("clicks", 0)
	info, err = c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if info.TotalRecords != 200 {
		t.Fatalf("since 0: TotalRecords %d, want 200", info.TotalRecords)
	}

	_, err = c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"nope"}})
	wantCode(t, err, codes.NotFound)
	_, err = c.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"a", "b"}})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"v":2,"table":"clicks"}`)})
	wantCode(t, err, codes.InvalidArgument)
}

func TestDoGetTicketForms(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	cat := memsink.NewCatalog()
	tab := newTable(t, mem, cat, "events", epochSchema, memsink.Options{MaxEpochs: 6})
	defer tab.Close()
	commitEpochs(t, mem, tab, 0, 5, 100)

	s := startServer(t, Config{Sinks: cat, Allocator: mem})
	c := flightClient(t, s)
	ctx := context.Background()

	read := func(tk Ticket) (*arrow.Schema, map[int64]int, int) {
		t.Helper()
		b, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		schema, recs, err := readAll(ctx, c, b)
		if err != nil {
			t.Fatal(err)
		}
		defer releaseAll(recs)
		m, total := epochCounts(recs)
		return schema, m, total
	}
	i64 := func(v int64) *int64 { return &v }

	if _, _, total := read(Ticket{Table: "EVENTS"}); total != 500 {
		t.Fatalf("current: %d rows", total)
	}
	if _, m, total := read(Ticket{Table: "events", Epoch: i64(2)}); total != 300 || m[3] != 0 {
		t.Fatalf("as of 2: %d rows %v", total, m)
	}
	schema, m, total := read(Ticket{Table: "events", Since: i64(2)})
	if total != 200 || m[3] != 100 || m[4] != 100 {
		t.Fatalf("since 2: %d rows %v", total, m)
	}
	if !schema.HasMetadata() || schema.NumFields() != 5 || schema.Field(3).Name != memsink.EpochColumn {
		t.Fatalf("since schema %s", schema)
	}

	// Incremental polling: pass the epoch of the previous stream.
	since := int64(-1)
	seen := 0
	for round := range 3 {
		schema, _, n := read(Ticket{Table: "events", Since: &since})
		seen += n
		v, _ := schema.Metadata().GetValue(EpochMetadataKey)
		if since, _ = strconv.ParseInt(v, 10, 64); since != int64(4+round) {
			t.Fatalf("round %d: latest epoch %d", round, since)
		}
		commitEpochs(t, mem, tab, since+1, since+2, 100)
	}
	if seen != 700 {
		t.Fatalf("polled %d rows, want 700", seen)
	}

	// Epoch 0 and 1 are evicted (6 retained epochs of 7).
	b, _ := AsOfTicket("events", 0)
	_, _, err := readAll(ctx, c, b)
	wantCode(t, err, codes.NotFound)
	b, _ = SinceTicket("events", 0)
	_, _, err = readAll(ctx, c, b)
	wantCode(t, err, codes.NotFound)
	_, _, err = readAll(ctx, c, []byte(`{"v":1,"table":"nope"}`))
	wantCode(t, err, codes.NotFound)
	_, _, err = readAll(ctx, c, []byte(`{"v":1,"table":"events","bogus":1}`))
	wantCode(t, err, codes.InvalidArgument)
	_, _, err = readAll(ctx, c, []byte("\x0a\x03abc"))
	wantCode(t, err, codes.InvalidArgument)
}

// TestDoGet10MRows reads a 10M-row table through plain Flight.
func TestDoGet10MRows(t *testing.T) {
	if testing.Short() {
		t.Skip("10M rows")
	}
	const rows = 10_000_000
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	cat := memsink.NewCatalog()
	tab := newTable(t, mem, cat, "big", epochSchema, memsink.Options{})
	defer tab.Close()
	for e := 0; e < 10; e++ {
		commit(t, tab, int64(e), epochRecord(mem, int64(e), e*rows/10, rows/10))
	}
	s := startServer(t, Config{Sinks: cat, Allocator: mem})
	c := flightClient(t, s)
	tk, _ := TableTicket("big")
	stream, err := c.DoGet(context.Background(), &flight.Ticket{Ticket: tk})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var n, sum int64
	batches := 0
	for rdr.Next() {
		rec := rdr.Record()
		batches++
		n += rec.NumRows()
		for _, v := range rec.Column(1).(*array.Int64).Int64Values() {
			sum += v
		}
	}
	if err := rdr.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if n != rows || sum != int64(rows)*(rows-1)/2 {
		t.Fatalf("read %d rows, sum %d", n, sum)
	}
	t.Logf("%d rows in %d batches", n, batches)
}

// TestDoGetSlicesLargeRecords: a record over the clients' message limit is
// sliced, so that a client with the default 4 MiB gRPC limit reads it.
func TestDoGetSlicesLargeRecords(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	cat := memsink.NewCatalog()
	schema := arrow.NewSchema([]arrow.Field{{Name: "epoch", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	tab := newTable(t, mem, cat, "wide", schema, memsink.Options{})
	defer tab.Close()
	b := array.NewRecordBuilder(mem, schema)
	long := strings.Repeat("x", 500)
	for i := range 60_000 { // ≈ 30 MB in one record
		b.Field(0).(*array.Int64Builder).Append(0)
		b.Field(1).(*array.StringBuilder).Append(long[:200+i%300])
	}
	rec := b.NewRecord()
	b.Release()
	if recordBytes(rec) < 16<<20 {
		t.Fatalf("test record of %d bytes is not over 16 MiB", recordBytes(rec))
	}
	commit(t, tab, 0, rec)

	s := startServer(t, Config{Sinks: cat, Allocator: mem})
	c := flightClient(t, s, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(4<<20)))
	tk, _ := TableTicket("wide")
	_, recs, err := readAll(context.Background(), c, tk)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	if _, n := epochCounts(recs); n != 60_000 || len(recs) < 8 {
		t.Fatalf("%d rows in %d batches", n, len(recs))
	}
	for i, r := range recs {
		if sz := recordBytes(r); sz > s.cfg.Limits.BatchBytes {
			t.Fatalf("batch %d: %d bytes over the %d target", i, sz, s.cfg.Limits.BatchBytes)
		}
	}
}

// TestIPCCompression: with IPCCompression set, batches are compressed and
// Arrow clients decompress them transparently.
func TestIPCCompression(t *testing.T) {
	for _, codec := range []string{"lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			cat := memsink.NewCatalog()
			tab := newTable(t, mem, cat, "t", epochSchema, memsink.Options{})
			defer tab.Close()
			commitEpochs(t, mem, tab, 0, 3, 70_000)
			s := startServer(t, Config{Sinks: cat, Allocator: mem, IPCCompression: codec})
			tk, _ := TableTicket("t")
			_, recs, err := readAll(context.Background(), flightClient(t, s), tk)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseAll(recs)
			if err := checkWholeEpochs(recs, 70_000); err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, r := range recs {
				for _, v := range r.Column(1).(*array.Int64).Int64Values() {
					sum += v
				}
			}
			if want := int64(3 * 70_000 * 69_999 / 2); sum != want {
				t.Fatalf("sum %d, want %d", sum, want)
			}
			// The bodies on the wire are compressed.
			stream, err := flightClient(t, s).DoGet(context.Background(), &flight.Ticket{Ticket: tk})
			if err != nil {
				t.Fatal(err)
			}
			wire := 0
			for {
				fd, err := stream.Recv()
				if err != nil {
					break
				}
				wire += len(fd.DataBody)
			}
			if raw := 3 * 70_000 * 24; wire*2 > raw {
				t.Fatalf("%d body bytes on the wire for %d bytes of data", wire, raw)
			}
		})
	}
}
