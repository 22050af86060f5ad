package memsink

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// fuzzSchema and fuzzFile build the valid files the fuzz targets start
// from.
var fuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "v", Type: vector.String, Nullable: true},
}, nil)

// fuzzNested has the nested and dictionary columns whose offsets and
// indices the validator checks.
var fuzzNested = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: vector.Boolean, Nullable: true},
	{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: vector.String}, Nullable: true},
	{Name: "list", Type: vector.ListOf(vector.String), Nullable: true},
	{Name: "w", Type: vector.WindowType, Nullable: true},
	{Name: "dec", Type: vector.Decimal(9, 1), Nullable: true},
}, nil)

func fuzzFile(tb testing.TB, rows []vt.Row, m fileMeta) []byte {
	return fuzzFileOf(tb, fuzzSchema, rows, m)
}

func fuzzFileOf(tb testing.TB, schema *arrow.Schema, rows []vt.Row, m fileMeta) []byte {
	mem := memory.NewGoAllocator()
	recs := vt.BuildRecords(mem, schema, rows, vt.Shape{BatchSize: 2})
	defer releaseAll(recs)
	raw, err := encodeFile(mem, schema, m, recs)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

var fuzzNow = time.Unix(1700000000, 0)

// decodeChecked decodes raw on a checked allocator and reads every value
// of what it returns; nothing may leak.
func decodeChecked(t *testing.T, raw []byte) error {
	done := make(chan bool)
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(testutil.Scaled(2 * time.Minute)):
			panic("WATCHDOG: decode hangs")
		}
	}()
	// Arrow's checked allocator, not the poisoning one, and no buffer over
	// fuzzDecodeCap: a fuzzed length (an LZ4 buffer's uncompressed size)
	// asks for up to maxDecodeBuffer (2 GiB), which the decoder allows a
	// real file, and zeroing that took 3–6 s per input, past the fuzz
	// coordinator's hang deadline on a loaded machine. The files fuzzed
	// here decode into a few KiB; a refused allocation panics inside the
	// IPC reader as one over maxDecodeBuffer does, so the decoder's
	// recovery and freeing are what the input exercises.
	mem := &cappedAllocator{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	defer mem.AssertSize(t, 0)
	_, _, recs, err := decodeFile(mem, raw)
	if err == nil {
		for _, r := range recs {
			_ = vt.RowsOf(r)
		}
	}
	releaseAll(recs)
	return err
}

// fuzzDecodeCap bounds one buffer of a fuzzed decode (see decodeChecked).
const fuzzDecodeCap = 1 << 20

// cappedAllocator is a checked allocator that refuses, by panicking as
// scopedAllocator does past maxDecodeBuffer, any buffer over
// fuzzDecodeCap.
type cappedAllocator struct {
	*memory.CheckedAllocator
}

func (a *cappedAllocator) Allocate(size int) []byte {
	if size > fuzzDecodeCap {
		panic(fmt.Sprintf("fuzzed decode: buffer of %d bytes", size))
	}
	return a.CheckedAllocator.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	if size > fuzzDecodeCap {
		panic(fmt.Sprintf("fuzzed decode: buffer of %d bytes", size))
	}
	return a.CheckedAllocator.Reallocate(size, b)
}

// FuzzDecodeFile feeds arbitrary bytes, as a damaged file would be, to
// the decoder: it must return an error (or records), never panic, and
// leak nothing.
func FuzzDecodeFile(f *testing.F) {
	f.Add(fuzzFile(f, nil, fileMeta{Epoch: 0, Prev: -1, Base: "0.arrow", Commit: fuzzNow}))
	f.Add(fuzzFile(f, []vt.Row{{1, "a"}, {2, nil}, {3, "ccc"}}, fileMeta{Epoch: 7, Prev: 3, Base: "3.arrow", Commit: fuzzNow, Rows: 3, EpochRows: 3}))
	f.Add([]byte{})
	f.Add([]byte("ASMS"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		decodeChecked(t, raw)
	})
}

// FuzzDecodeRecordBatches damages the record-batch messages of a valid
// file and then fixes up the checksum, so that the Arrow IPC decoding
// behind the checksum is exercised: patch picks a file (1 byte), an
// offset (4 bytes) into the region after the schema message, then bytes XORed in there. (The
// schema message is left intact: arrow/go v17's reader sizes allocations
// from its flatbuffer vector lengths unchecked, so a crafted schema can
// exhaust memory; damage there is caught by the checksum, the defence a
// trusted checkpoint directory needs.)
func FuzzDecodeRecordBatches(f *testing.F) {
	bases := recordBatchBases(f)
	f.Add([]byte{0, 0, 0, 0, 0, 0xff})
	f.Add([]byte{1, 8, 0, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f})
	f.Add([]byte{1, 200, 0, 0, 0, 1})
	// A buffer length of about 2 GiB in the first base (3–6 s to
	// allocate and zero before fuzzDecodeCap): refused, recovered, freed.
	f.Add([]byte{0, 0x48, 0x01, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f})
	f.Fuzz(func(t *testing.T, patch []byte) {
		if raw := applyPatch(bases, patch); raw != nil {
			decodeChecked(t, raw)
		}
	})
}

// patchBase is a valid file body and its record-batch region.
type patchBase struct {
	body       []byte
	start, end int
}

func recordBatchBases(tb testing.TB) []patchBase {
	meta := fileMeta{Epoch: 7, Prev: 3, Base: "3.arrow", Commit: fuzzNow, Rows: 5, EpochRows: 5}
	var bases []patchBase
	for _, raw := range [][]byte{
		fuzzFile(tb, []vt.Row{{1, "a"}, {2, nil}, {3, "ccc"}, {4, "dd"}, {5, nil}}, meta),
		fuzzFileOf(tb, fuzzNested, []vt.Row{
			{true, "red", []any{"x", nil}, []any{int64(1), int64(2)}, "1.5"},
			{nil, nil, nil, nil, nil},
			{false, "blue", []any{}, []any{nil, int64(3)}, "-2.0"},
			{true, "red", []any{"yy"}, nil, "0.1"},
			{false, "green", []any{"z", "zz", ""}, []any{int64(4), nil}, "7.7"},
		}, meta),
	} {
		// Stream layout: the schema message (continuation marker, length,
		// flatbuffer), dictionary and record batch messages, end-of-stream.
		body := raw[:len(raw)-8]
		metaLen := int(binary.LittleEndian.Uint32(body[4:8]))
		b := patchBase{body: body, start: 8 + metaLen, end: len(body) - 8}
		if b.start >= b.end {
			tb.Fatalf("no record batch region (%d..%d)", b.start, b.end)
		}
		bases = append(bases, b)
	}
	return bases
}

// applyPatch returns the patched file with a valid trailer, or nil when
// the patch is too short.
func applyPatch(bases []patchBase, patch []byte) []byte {
	if len(patch) < 6 {
		return nil
	}
	b := bases[int(patch[0])%len(bases)]
	raw := append([]byte(nil), b.body...)
	off := b.start + int(binary.LittleEndian.Uint32(patch[1:])%uint32(b.end-b.start))
	for i, x := range patch[5:] {
		if off+i < b.end {
			raw[off+i] ^= x
		}
	}
	return withTrailer(raw)
}

// withTrailer appends a valid trailer to body.
func withTrailer(body []byte) []byte {
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(body, castagnoli))
	copy(tr[4:], fileMagic[:])
	return append(body, tr[:]...)
}
