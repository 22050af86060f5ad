package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// An ingest fuzz input is a DoPut stream: FlightData messages framed as
// [u32 header length][header][u32 body length][body] (little endian,
// lengths clipped to what is left), header being the IPC flatbuffer
// Message and body its buffers. The fuzzer mutates headers (buffer
// offsets and lengths, node lengths and null counts, types) and bodies
// (offsets, bitmaps, UTF-8) alike.

// frameMessages encodes FlightData in the fuzz framing.
func frameMessages(msgs []*flight.FlightData) []byte {
	var out []byte
	for _, m := range msgs {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(m.DataHeader)))
		out = append(out, m.DataHeader...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(m.DataBody)))
		out = append(out, m.DataBody...)
	}
	return out
}

// unframeMessages decodes the fuzz framing; desc goes on the first
// message (a DoPut always names its target there).
func unframeMessages(b []byte, desc *flight.FlightDescriptor) []*flight.FlightData {
	next := func() []byte {
		if len(b) < 4 {
			b = nil
			return nil
		}
		n := min(int(binary.LittleEndian.Uint32(b)), len(b)-4)
		v := b[4 : 4+n]
		b = b[4+n:]
		return v
	}
	var out []*flight.FlightData
	for len(b) > 0 && len(out) < 64 {
		out = append(out, &flight.FlightData{DataHeader: next(), DataBody: next()})
	}
	if len(out) == 0 {
		out = append(out, &flight.FlightData{})
	}
	out[0].FlightDescriptor = desc
	return out
}

// ingestSeeds are valid DoPut streams into events, and hand-made bad
// ones: wrong schema, invalid UTF-8, and batches whose buffers lie.
func ingestSeeds(t testing.TB, fx *fuzzFixture) [][]byte {
	mem := fx.mem
	good := eventsRecord(mem, []any{int64(1), "a", 1.0}, []any{nil, "ünï", nil}, []any{int64(3), nil, 3.5})
	defer good.Release()
	one := eventsRecord(mem, []any{int64(9), "z", 9.0})
	defer one.Release()
	empty := eventsRecord(mem)
	defer empty.Release()
	seeds := [][]byte{
		frameMessages(flightMessages(t, fuzzEventsSchema, nil, good)),
		frameMessages(flightMessages(t, fuzzEventsSchema, nil, good, one, empty, good)),
		frameMessages(flightMessages(t, fuzzEventsSchema, nil)),
		nil,
	}
	// A schema the table does not have.
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	ob := array.NewRecordBuilder(mem, other)
	ob.Field(0).(*array.StringBuilder).Append("1")
	orec := ob.NewRecord()
	ob.Release()
	defer orec.Release()
	seeds = append(seeds, frameMessages(flightMessages(t, other, nil, orec)))
	// Nested and other layouts (accepted as parameters, which have no
	// fixed schema), with and without a dictionary column.
	all := allLayoutsRecord(t, mem)
	defer all.Release()
	seeds = append(seeds, frameMessages(flightMessages(t, all.Schema(), nil, all)))
	plain := array.NewRecord(arrow.NewSchema(all.Schema().Fields()[:5], nil), all.Columns()[:5], all.NumRows())
	defer plain.Release()
	slice := plain.NewSlice(2, 7)
	defer slice.Release()
	seeds = append(seeds, frameMessages(flightMessages(t, plain.Schema(), nil, plain, slice)))
	for _, bad := range badIngestBatches(t, fx) {
		seeds = append(seeds, frameMessages(flightMessages(t, fuzzEventsSchema, nil, one, bad.rec)))
		bad.rec.Release()
	}
	return seeds
}

// FuzzDoPutIngest pushes one DoPut stream into the events ingest table,
// through the plain Flight path (PATH descriptor, mode 0) or Flight SQL
// bulk ingest (CommandStatementIngest, mode 1), or binds it as the
// parameters of a prepared statement (mode 2). Invariants: no panic, no
// Internal error, every batch that reached the table is well-formed and
// acknowledged (a rejected batch changed nothing), and once the table is
// dropped no Arrow bytes or goroutines are left.
func FuzzDoPutIngest(f *testing.F) {
	fx := newFuzzFixture(f)
	for _, s := range ingestSeeds(f, fx) {
		for mode := range uint8(3) {
			f.Add(mode, s)
		}
	}
	ingestCmd := anyCmd(f, &pb.CommandStatementIngest{Table: "events", TableDefinitionOptions: &pb.CommandStatementIngest_TableDefinitionOptions{
		IfExists: pb.CommandStatementIngest_TableDefinitionOptions_TABLE_EXISTS_OPTION_APPEND}})
	bindCmd := anyCmd(f, &pb.CommandPreparedStatementQuery{PreparedStatementHandle: []byte(fx.handle)})
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		defer cancel()
		defer watchdog(20*time.Second, data)()
		fx.begin()
		var desc *flight.FlightDescriptor
		switch mode % 3 {
		case 0:
			desc = &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"events"}}
		case 1:
			desc = &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: ingestCmd}
		default:
			desc = &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: bindCmd}
		}
		stream := fx.ingest.reset()
		put := &fakePut{fakeServerStream: fakeServerStream{ctx}, in: unframeMessages(data, desc)}
		err := fx.srv.svc.DoPut(put)
		acked := int64(-1)
		if mode%3 == 0 {
			acked = lastAcked(t, put.results)
		}
		checkIngested(t, stream, acked)
		stream.Close()
		fx.checkBoundParams(t)
		if p, err := fx.srv.sql.prepared.get([]byte(fx.handle), ""); err == nil {
			p.setParams(nil) // the next input starts unbound
		}
		if err != nil && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("DoPut failed with %s, want InvalidArgument: %v", status.Code(err), err)
		}
		fx.check(t, "DoPut", err)
	})
}

// lastAcked is the row count of the last DoPutUpdateResult (0: none).
func lastAcked(t *testing.T, results []*flight.PutResult) int64 {
	var n int64
	for _, r := range results {
		var upd pb.DoPutUpdateResult
		if err := proto.Unmarshal(r.GetAppMetadata(), &upd); err != nil {
			t.Fatalf("unreadable acknowledgement: %v", err)
		}
		n = upd.GetRecordCount()
	}
	return n
}

// checkIngested fails unless every block in stream is well-formed with
// the stream's schema and, when acked >= 0, the blocks hold exactly the
// acknowledged rows.
func checkIngested(t *testing.T, stream *arrowstream.MemoryStream, acked int64) {
	t.Helper()
	ctx := context.Background()
	end, err := stream.LatestOffset(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	if end != nil {
		op, err := stream.Read(ctx, nil, end)
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		for {
			rec, err := op.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rows += rec.NumRows()
			verr := validateRecord(rec)
			same := rec.Schema().Equal(stream.Schema())
			rec.Release()
			if verr != nil || !same {
				t.Fatalf("an accepted batch is malformed (%v) or has another schema (%v)", verr, !same)
			}
		}
	}
	if acked >= 0 && rows != acked {
		t.Fatalf("the table holds %d rows, %d were acknowledged", rows, acked)
	}
}

// badBatch is a batch of fuzzEventsSchema that arrow-go builds and
// serializes without complaint but that is not well-formed.
type badBatch struct {
	name string
	rec  arrow.Record
	want string // in the rejection message
}

// badIngestBatches builds the malformed batches (owned by the caller).
func badIngestBatches(t testing.TB, fx *fuzzFixture) []badBatch {
	mem := fx.mem
	ids := func() arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues([]int64{1, 2, 3}, nil)
		return b.NewArray()
	}
	amounts := func() arrow.Array {
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		b.AppendValues([]float64{1, 2, 3}, nil)
		return b.NewArray()
	}
	// names builds a string column from raw offsets and data, with nulls
	// declared and the validity bitmap given.
	names := func(offsets []int32, data string, bitmap []byte, nulls int) arrow.Array {
		ob := memory.NewResizableBuffer(mem)
		ob.Resize(len(offsets) * 4)
		copy(arrow.Int32Traits.CastToBytes(arrow.Int32Traits.CastFromBytes(ob.Bytes())), arrow.Int32Traits.CastToBytes(offsets))
		db := memory.NewResizableBuffer(mem)
		db.Resize(len(data))
		copy(db.Bytes(), data)
		var vb *memory.Buffer
		if bitmap != nil {
			vb = memory.NewResizableBuffer(mem)
			vb.Resize(len(bitmap))
			copy(vb.Bytes(), bitmap)
			defer vb.Release()
		}
		defer ob.Release()
		defer db.Release()
		d := array.NewData(arrow.BinaryTypes.String, len(offsets)-1, []*memory.Buffer{vb, ob, db}, nil, nulls, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	rec := func(name arrow.Array) arrow.Record {
		id, am := ids(), amounts()
		defer id.Release()
		defer am.Release()
		defer name.Release()
		return array.NewRecord(fuzzEventsSchema, []arrow.Array{id, name, am}, 3)
	}
	return []badBatch{
		{"invalid UTF-8", rec(names([]int32{0, 1, 3, 4}, "a\xff\xfeb", nil, 0)), `column "name": row 1: invalid UTF-8`},
		{"decreasing offsets", rec(names([]int32{0, 3, 1, 4}, "abcd", nil, 0)), `column "name": row 1: offsets decrease`},
		{"null count not the bitmap's", rec(names([]int32{0, 1, 2, 3}, "abc", []byte{0b111}, 2)), `column "name": null count 2, but the validity bitmap has 0 nulls`},
		{"split UTF-8 sequence", rec(names([]int32{0, 1, 2, 2}, "\xc3\xbc", nil, 0)), `column "name": row 0: invalid UTF-8`},
	}
}
