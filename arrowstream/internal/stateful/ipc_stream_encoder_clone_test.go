package stateful

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// cloneSchemas are the schemas of the clone tests: the direct path's
// flat ones (filled by fillDirect), then the encoder's (a list column:
// no template, through the writer; filled by fillRandom).
func cloneSchemas() (schemas []*arrow.Schema, direct int) {
	d := directSchemas()
	return append(d, encoderSchemas()...), len(d)
}

// TestIPCStreamEncoderCloneMatchesWriter checks the partitions' encoders,
// clones of one template: two clones of each schema's encoder, written
// through in turn (records with rows, sliced, empty, all null), each
// entry is the bytes writeJoinRecord writes and reads back; a selection
// planned through a clone is the entry of the gathered rows; and the
// template's message is unchanged by its clones' writes (they share no
// bytes it is patched in).
func TestIPCStreamEncoderCloneMatchesWriter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(36))
	schemas, direct := cloneSchemas()
	for si, schema := range schemas {
		proto, err := newIPCStreamEncoder(mem, schema)
		if err != nil {
			t.Fatal(err)
		}
		var head []byte
		if proto.direct != nil {
			head = append(head, proto.direct.head...)
		}
		var clones [2]*ipcStreamEncoder
		for i := range clones {
			if clones[i], err = proto.clone(); err != nil {
				t.Fatal(err)
			}
			if (clones[i].direct == nil) != (proto.direct == nil) {
				t.Fatalf("schema %d: the clone's template is %v, the original's %v", si, clones[i].direct != nil, proto.direct != nil)
			}
		}
		for i := 0; i < 60; i++ {
			enc := clones[i%2]
			rec := cloneTestRecord(mem, schema, si < direct, i, rng)
			var want, got bytes.Buffer
			if err := writeJoinRecord(mem, &want, rec); err != nil {
				t.Fatal(err)
			}
			if err := enc.write(&got, rec); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("schema %d record %d (%d rows)", si, i, rec.NumRows())
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("%s: the clone wrote %d bytes, ipc.Writer %d, and they differ", what, got.Len(), want.Len())
			}
			assertJoinEntryReadsBack(t, mem, got.Bytes(), rec, what)
			if rec.NumRows() > 0 {
				sel := randomSelection(rng, int(rec.NumRows()))
				if size, ok := enc.planSel(rec, sel); ok {
					var viaSel bytes.Buffer
					if err := enc.writeSel(&viaSel); err != nil {
						t.Fatal(err)
					}
					rows := concatRows(t, mem, rec, sel)
					var wantSel bytes.Buffer
					if err := writeJoinRecord(mem, &wantSel, rows); err != nil {
						t.Fatal(err)
					}
					rows.Release()
					if viaSel.Len() != size || !bytes.Equal(viaSel.Bytes(), wantSel.Bytes()) {
						t.Fatalf("%s: a selection of %d rows through the clone differs from its gathered rows' entry", what, len(sel))
					}
				} else if proto.direct != nil && len(sel) > 0 && enc.direct == nil {
					t.Fatalf("%s: the clone has no template", what)
				}
			}
			rec.Release()
		}
		if proto.direct != nil && !bytes.Equal(proto.direct.head, head) {
			t.Fatalf("schema %d: the clones' writes changed the template's message", si)
		}
	}
}

// cloneTestRecord returns the i-th record of the clone test: every
// fifth without rows, every seventh all null, every third sliced.
func cloneTestRecord(mem memory.Allocator, schema *arrow.Schema, direct bool, i int, rng *rand.Rand) arrow.Record {
	rows := 1 + rng.Intn(60)
	if i%5 == 4 {
		rows = 0
	}
	var rec arrow.Record
	if direct {
		nulls := 0.3
		if i%7 == 6 {
			nulls = 1
		}
		b := array.NewRecordBuilder(mem, schema)
		for c, f := range schema.Fields() {
			fillDirect(b.Field(c), f.Nullable, rows, nulls, rng)
		}
		rec = b.NewRecord()
		b.Release()
	} else {
		rec = randomRecord(mem, schema, rows, rng)
	}
	if i%3 == 1 && rows > 2 {
		lo := rng.Int63n(int64(rows) / 2)
		s := rec.NewSlice(lo, lo+1+rng.Int63n(int64(rows)-lo-1))
		rec.Release()
		return s
	}
	return rec
}

// TestJoinBatchFramingIsEntryOverhead checks batchFraming, the bytes the
// join's live-bytes figure counts for a stored batch beside its body:
// for every side schema with a template, a batch's key and entry are its
// framing plus the message's body length (as ipc's reader reads it) for
// batches of 1 to 300 rows, sliced or not. (It was learned by encoding
// an empty batch, whose message leaves out the row count and body
// length: 16 bytes short of every stored batch's.)
func TestJoinBatchFramingIsEntryOverhead(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(37))
	for si, schema := range directSchemas() {
		s := &statefulJoin{mem: mem}
		for i := range s.sides {
			s.sides[i] = &joinSide{codec: &rowCodec{schema: schema}}
		}
		framing := s.batchFraming(0)
		if s.encProto[0] == nil {
			t.Fatalf("schema %d: batchFraming made no template encoder for the side's writes", si)
		}
		for i := 0; i < 30; i++ {
			rec := cloneTestRecord(mem, schema, true, 5*i, rng) // with rows: 5i%5 != 4
			if i%2 == 1 && rec.NumRows() > 2 {
				lo := rng.Int63n(rec.NumRows() / 2)
				sl := rec.NewSlice(lo, lo+1+rng.Int63n(rec.NumRows()-lo-1))
				rec.Release()
				rec = sl
			}
			var entry bytes.Buffer
			if err := writeJoinRecord(mem, &entry, rec); err != nil {
				t.Fatal(err)
			}
			mr := ipc.NewMessageReader(bytes.NewReader(entry.Bytes()[len(joinBatchMagic):]), ipc.WithAllocator(mem))
			msg, err := mr.Message()
			if err != nil {
				t.Fatal(err)
			}
			body := msg.BodyLen()
			msg.Release()
			mr.Release()
			if got, want := framing+body, int64(entry.Len())+9; got != want {
				t.Fatalf("schema %d record %d (%d rows): framing %d + body %d = %d, the stored key and entry %d", si, i, rec.NumRows(), framing, body, got, want)
			}
			rec.Release()
		}
	}
}

// TestIPCStreamEncoderCloneAllocations checks the point of the clones: a
// partition's encoder made from its side's template allocates a few
// objects, where starting one (a writer, the schema's message, a one-row
// probe) made dozens.
func TestIPCStreamEncoderCloneAllocations(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := directSchemas()[1]
	proto, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	started := testing.AllocsPerRun(20, func() {
		if _, err := newIPCStreamEncoder(mem, schema); err != nil {
			t.Fatal(err)
		}
	})
	cloned := testing.AllocsPerRun(20, func() {
		if _, err := proto.clone(); err != nil {
			t.Fatal(err)
		}
	})
	if cloned > 4 {
		t.Errorf("a clone made %.0f allocations (a started encoder %.0f): it starts a writer", cloned, started)
	}
	t.Logf("allocations per encoder: started %.0f, cloned %.0f", started, cloned)
}

// BenchmarkJoinPartEncoders is the encoders a join makes for its
// partitions' first writes: both sides of q20 (bid, auction) at 2 and
// 200 partitions, each from a fresh query.
func BenchmarkJoinPartEncoders(b *testing.B) {
	bid := arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: vector.Int64, Nullable: true}, {Name: "bidder", Type: vector.Int64, Nullable: true},
		{Name: "price", Type: vector.Int64, Nullable: true}, {Name: "channel", Type: vector.String, Nullable: true},
		{Name: "url", Type: vector.String, Nullable: true}, {Name: "dateTime", Type: vector.Timestamp, Nullable: true},
		{Name: "extra", Type: vector.String, Nullable: true},
	}, nil)
	auction := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: vector.Int64, Nullable: true}, {Name: "itemName", Type: vector.String, Nullable: true},
		{Name: "description", Type: vector.String, Nullable: true}, {Name: "initialBid", Type: vector.Int64, Nullable: true},
		{Name: "reserve", Type: vector.Int64, Nullable: true}, {Name: "dateTime", Type: vector.Timestamp, Nullable: true},
		{Name: "expires", Type: vector.Timestamp, Nullable: true}, {Name: "seller", Type: vector.Int64, Nullable: true},
		{Name: "category", Type: vector.Int64, Nullable: true}, {Name: "extra", Type: vector.String, Nullable: true},
	}, nil)
	mem := memory.NewGoAllocator()
	for _, parts := range []int{2, 200} {
		b.Run(fmt.Sprintf("parts=%d", parts), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				s := &statefulJoin{mem: mem}
				s.sides[0] = &joinSide{codec: &rowCodec{schema: bid}}
				s.sides[1] = &joinSide{codec: &rowCodec{schema: auction}}
				for p := 0; p < parts; p++ {
					jp := &joinPart{}
					for tag, schema := range []*arrow.Schema{bid, auction} {
						if _, err := jp.encoder(s, byte(tag), schema); err != nil {
							b.Fatal(err)
						}
					}
				}
				s.batchFraming(0)
				s.batchFraming(1)
			}
		})
	}
}
