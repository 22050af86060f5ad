package stateful

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// joinIPCTestRecord builds a bid-like batch of n rows (ints, a timestamp,
// strings with nulls, a dictionary column), sliced from offset off of a
// larger one as the split's batches are.
func joinIPCTestRecord(t testing.TB, mem memory.Allocator, n, off int) arrow.Record {
	t.Helper()
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "url", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "dateTime", Type: arrow.FixedWidthTypes.Timestamp_us},
		{Name: "channel", Type: dictType},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range n + off {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if r.IntN(5) == 0 {
			b.Field(1).AppendNull()
			b.Field(2).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(r.Int64N(1e6))
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("https://www.nexmark.com/item.htm?query=%d", r.IntN(1000)))
		}
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1e12 + i))
		if err := b.Field(4).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprintf("channel-%d", r.IntN(4))); err != nil {
			t.Fatal(err)
		}
	}
	whole := b.NewRecord()
	defer whole.Release()
	return whole.NewSlice(int64(off), int64(off+n))
}

// fullIPCStream is the format before: a whole IPC stream, schema first.
func fullIPCStream(t testing.TB, mem memory.Allocator, rec arrow.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	iw := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
	if err := iw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestJoinBatchEntryWithoutSchema: a batch entry is the IPC stream less
// its schema message (plus the magic), reads back as the rows written,
// and an entry of the format before (a whole stream) still reads.
func TestJoinBatchEntryWithoutSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := &statefulJoin{mem: mem, keep: mem}
	for _, tc := range []struct{ n, off int }{{0, 0}, {1, 0}, {46, 3}, {1000, 17}} {
		rec := joinIPCTestRecord(t, mem, tc.n, tc.off)
		raw, err := encodeJoinRecord(mem, rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(raw, joinBatchMagic[:]) {
			t.Fatalf("%d rows: the entry does not start with %q", tc.n, joinBatchMagic[:])
		}
		full := fullIPCStream(t, mem, rec)
		head, err := joinSchemaMessage(mem, rec.Schema())
		if err != nil {
			t.Fatal(err)
		}
		if want := len(full) - len(head) + len(joinBatchMagic); len(raw) != want {
			t.Errorf("%d rows: entry of %d bytes, want %d (the stream of %d bytes less the schema message of %d)", tc.n, len(raw), want, len(full), len(head))
		}
		for name, entry := range map[string][]byte{"without schema": raw, "whole stream (before)": full} {
			got, err := s.decodeJoinBatch(entry, rec.Schema())
			if err != nil {
				t.Fatalf("%d rows, %s: %v", tc.n, name, err)
			}
			if !array.RecordEqual(got, rec) {
				t.Errorf("%d rows, %s: read back\n%v\nwant\n%v", tc.n, name, got, rec)
			}
			got.Release()
		}
		rec.Release()
	}
}

// TestSchemaSkipperChunked: skipping the schema message does not depend
// on how the stream is cut into writes.
func TestSchemaSkipperChunked(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := joinIPCTestRecord(t, mem, 30, 2)
	defer rec.Release()
	want, err := encodeJoinRecord(mem, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := fullIPCStream(t, mem, rec)
	for seed := range uint64(20) {
		var got bytes.Buffer
		sk := &schemaSkipper{w: &got}
		r := rand.New(rand.NewPCG(seed, 2))
		for p := full; len(p) > 0; {
			c := min(1+r.IntN(13), len(p))
			if _, err := sk.Write(p[:c]); err != nil {
				t.Fatal(err)
			}
			p = p[c:]
		}
		if !sk.done || !bytes.Equal(got.Bytes(), want[len(joinBatchMagic):]) {
			t.Fatalf("seed %d: skipped stream of %d bytes differs from the entry's %d", seed, got.Len(), len(want)-len(joinBatchMagic))
		}
	}
	// Not an IPC stream: refused, not skipped through.
	sk := &schemaSkipper{w: &bytes.Buffer{}}
	if _, err := sk.Write([]byte("not an IPC stream")); err == nil {
		t.Error("a stream without a continuation marker was accepted")
	}
}

// TestJoinBatchEntryDamage: a cut entry without schema is an error
// naming damage, never a panic or the whole batch. (An altered byte is
// caught by the store's checksum of the entry before it gets here.)
func TestJoinBatchEntryDamage(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := &statefulJoin{mem: mem, keep: mem}
	rec := joinIPCTestRecord(t, mem, 40, 1)
	defer rec.Release()
	raw, err := encodeJoinRecord(mem, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for cut := len(joinBatchMagic); cut < len(raw)-8; cut += 7 {
		got, err := s.decodeJoinBatch(raw[:cut], rec.Schema())
		if err == nil {
			// A cut at a message boundary reads fewer rows; it must not
			// read as the whole batch.
			if array.RecordEqual(got, rec) {
				t.Errorf("cut at %d of %d bytes read as the whole batch", cut, len(raw))
			}
			got.Release()
			continue
		}
		if !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Errorf("cut at %d: %v, want ErrCorrupt", cut, err)
		}
	}
}

// BenchmarkJoinBatchEntry encodes a partition's share of an epoch as a
// whole IPC stream (the entry before) and without its schema (the entry
// now): 46 bid-like rows (10,000 events over 200 partitions) and 2 rows
// (a small epoch); entry-bytes is what the state log then holds per batch.
func BenchmarkJoinBatchEntry(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, rows := range []int{2, 46} {
		rec := joinIPCTestRecord(b, mem, rows, 5)
		defer rec.Release()
		scratch := make([]byte, 0, 64<<10)
		b.Run(fmt.Sprintf("rows=%d/whole-stream", rows), func(b *testing.B) {
			var n int
			for b.Loop() {
				buf := bytes.NewBuffer(scratch[:0])
				iw := ipc.NewWriter(buf, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem))
				if err := iw.Write(rec); err != nil {
					b.Fatal(err)
				}
				if err := iw.Close(); err != nil {
					b.Fatal(err)
				}
				n = buf.Len()
			}
			b.ReportMetric(float64(n), "entry-bytes")
		})
		b.Run(fmt.Sprintf("rows=%d/without-schema", rows), func(b *testing.B) {
			var n int
			for b.Loop() {
				raw, err := encodeJoinRecord(mem, rec, &scratch)
				if err != nil {
					b.Fatal(err)
				}
				n = len(raw)
			}
			b.ReportMetric(float64(n), "entry-bytes")
		})
	}
}
