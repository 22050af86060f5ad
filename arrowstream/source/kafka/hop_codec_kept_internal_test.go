package kafka

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/arrowstream/arrowstream/vector"
)

// TestHopEncodeKeptBufferIsReset: the upstream sink keeps its IPC buffer
// across records; a record encoded after a larger one carries its own
// rows only, and the value produced before is not changed by the next
// encode (it does not alias the kept buffer).
func TestHopEncodeKeptBufferIsReset(t *testing.T) {
	mem, big, small, enc, dec, msg := hopCodecFixture(t)
	var buf bytes.Buffer
	vBig, err := encodeHopBatchWith(&buf, mem, enc, hopTestSchema, big)
	if err != nil {
		t.Fatal(err)
	}
	vSmall, err := encodeHopBatchWith(&buf, mem, enc, hopTestSchema, small)
	if err != nil {
		t.Fatal(err)
	}
	// Uncompressed, the value is a copy too.
	raw, err := encodeHopBatchWith(&buf, mem, nil, hopTestSchema, small)
	if err != nil {
		t.Fatal(err)
	}
	rawCopy := bytes.Clone(raw)
	if _, err := encodeHopBatchWith(&buf, mem, nil, hopTestSchema, big); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, rawCopy) {
		t.Fatal("an uncompressed value changed with the next encode into the same buffer")
	}
	for _, c := range []struct {
		name string
		v    []byte
		want arrow.Record
	}{{"small after big", vSmall, small}, {"big", vBig, big}} {
		recs, err := decodeHopBatch(mem, dec, hopTestSchema, msg, c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(recs) != 1 || !array.RecordEqual(recs[0], c.want) {
			t.Fatalf("%s: decoded %d records, want the one encoded", c.name, len(recs))
		}
		for _, r := range recs {
			r.Release()
		}
	}
}

// TestHopDecodeScratchNotAliased: the downstream decompresses into a
// kept scratch buffer; whatever it held before does not show in the
// rows, and rows decoded from it stay intact when it is overwritten.
func TestHopDecodeScratchNotAliased(t *testing.T) {
	mem, big, small, enc, dec, msg := hopCodecFixture(t)
	vBig, err := encodeHopBatch(mem, enc, hopTestSchema, big)
	if err != nil {
		t.Fatal(err)
	}
	vSmall, err := encodeHopBatch(mem, enc, hopTestSchema, small)
	if err != nil {
		t.Fatal(err)
	}
	scratch := bytes.Repeat([]byte{0xab}, 1<<16)
	bigRecs, scratch, err := decodeHopBatchInto(mem, dec, hopTestSchema, msg, vBig, scratch)
	if err != nil {
		t.Fatal(err)
	}
	smallRecs, scratch, err := decodeHopBatchInto(mem, dec, hopTestSchema, msg, vSmall, scratch)
	if err != nil {
		t.Fatal(err)
	}
	for i := range scratch[:cap(scratch)] {
		scratch[:cap(scratch)][i] = 0xcd
	}
	if len(bigRecs) != 1 || !array.RecordEqual(bigRecs[0], big) {
		t.Fatal("rows decoded from the scratch buffer changed when it was reused and overwritten")
	}
	if len(smallRecs) != 1 || !array.RecordEqual(smallRecs[0], small) {
		t.Fatal("the second record decoded into the scratch buffer is not the one encoded")
	}
	for _, r := range append(bigRecs, smallRecs...) {
		r.Release()
	}
}

// kafkaHopRows is the Kafka rows (the reader's schema) of one data
// record per value, all of partition 0 from offset 0.
func kafkaHopRows(mem memory.Allocator, values ...[]byte) arrow.Record {
	b := array.NewRecordBuilder(mem, Schema(false))
	defer b.Release()
	for i, v := range values {
		b.Field(0).(*array.BinaryBuilder).Append(hopKeyData)
		b.Field(1).(*array.BinaryBuilder).Append(v)
		b.Field(2).(*array.StringBuilder).Append("hop")
		b.Field(3).(*array.Int32Builder).Append(0)
		b.Field(4).(*array.Int64Builder).Append(int64(i))
		b.Field(5).(*array.TimestampBuilder).Append(0)
		b.Field(6).(*array.Int32Builder).Append(0)
	}
	return b.NewRecord()
}

// TestHopSourceEpochsShareCodec: a hop source's epochs decode with one
// zstd decoder and one scratch buffer for its life (each epoch made its
// own decoder: fixed work paid k times as often at k instances), and a
// second epoch, decoding into the buffer the first left, returns its
// own rows only while the first epoch's rows stay as they were.
func TestHopSourceEpochsShareCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	enc, err := newHopEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	big, small := hopRecord(mem, 0, 500, 50), hopRecord(mem, 1000, 3, 3)
	defer big.Release()
	defer small.Release()
	vBig, err := encodeHopBatch(mem, enc, hopTestSchema, big)
	if err != nil {
		t.Fatal(err)
	}
	vSmall, err := encodeHopBatch(mem, enc, hopTestSchema, small)
	if err != nil {
		t.Fatal(err)
	}
	s := &hopSource{mem: mem, schema: hopTestSchema, topic: "hop"}
	epoch := func(v []byte) ([]arrow.Record, *hopDecoder) {
		t.Helper()
		in := kafkaHopRows(mem, v)
		scan, err := vector.NewScan(in.Schema(), in)
		in.Release()
		if err != nil {
			t.Fatal(err)
		}
		op, err := s.decodeEpoch(scan)
		if err != nil {
			t.Fatal(err)
		}
		d := op.(*hopDecoder)
		var out []arrow.Record
		for {
			rec, err := op.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rec)
		}
		if err := op.Close(); err != nil {
			t.Fatal(err)
		}
		return out, d
	}
	first, d1 := epoch(vBig)
	kept := s.codec.scratch
	if cap(kept) == 0 {
		t.Fatal("the first epoch's scratch buffer was not kept")
	}
	second, d2 := epoch(vSmall)
	if d1.dec != d2.dec {
		t.Fatal("the second epoch made its own zstd decoder")
	}
	if &s.codec.scratch[:1][0] != &kept[:1][0] {
		t.Fatal("the second epoch did not decode into the kept scratch buffer")
	}
	if len(second) != 1 || !array.RecordEqual(second[0], small) {
		t.Fatalf("the second epoch returned %d records, want its own 3 rows", len(second))
	}
	if len(first) != 1 || !array.RecordEqual(first[0], big) {
		t.Fatal("the first epoch's rows changed when the second decoded into the kept buffer")
	}
	for _, r := range append(first, second...) {
		r.Release()
	}
	// Closing the source closes the decoder: an epoch planned after
	// fails instead of decoding with it.
	s.codec.close()
	if _, _, _, err := s.codec.take(mem, hopTestSchema); err == nil {
		t.Fatal("a closed source's codec lent its decoder")
	}
}

// hopCodecFixture returns a checked allocator (asserted empty at the
// test's end), a large and a small hop record, an encoder, a decoder and
// the schema message, all released when the test ends.
func hopCodecFixture(t *testing.T) (*memory.CheckedAllocator, arrow.Record, arrow.Record, *zstd.Encoder, *zstd.Decoder, []byte) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	big, small := hopRecord(mem, 0, 500, 50), hopRecord(mem, 1000, 3, 3)
	t.Cleanup(func() { big.Release(); small.Release() })
	enc, err := newHopEncoder()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enc.Close() })
	dec, err := newHopDecoder()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dec.Close)
	msg, err := hopSchemaMessage(mem, hopTestSchema)
	if err != nil {
		t.Fatal(err)
	}
	return mem, big, small, enc, dec, msg
}
