package memsink

import (
	"bytes"
	"os"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// fuzzSegment builds a valid log segment of the given epochs' records
// through the log's own append path.
func fuzzSegment(tb testing.TB, rows [][]vt.Row) []byte {
	dir := tb.TempDir()
	l := newSinkLog(dir, nil)
	mem := memory.NewGoAllocator()
	for e, rs := range rows {
		recs := vt.BuildRecords(mem, fuzzSchema, rs, vt.Shape{BatchSize: 2})
		m := fileMeta{Epoch: int64(e), Prev: int64(e) - 1, Base: "0.arrow", Commit: fuzzNow, Rows: int64(len(rs)), EpochRows: int64(len(rs))}
		buf := bytes.NewBuffer(l.frameStart())
		err := encodeIPC(buf, mem, fuzzSchema, m, recs, fileCodec())
		releaseAll(recs)
		if err != nil {
			tb.Fatal(err)
		}
		if err := l.append(epochFile(int64(e)), false, int64(e), buf.Bytes()); err != nil {
			tb.Fatal(err)
		}
	}
	l.closeActive()
	raw, err := os.ReadFile(l.segs[0].path)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// FuzzDecodeLogSegment feeds arbitrary bytes, as a damaged or torn
// segment would be, to the segment decoder and decodes every record it
// accepts: errors or records, never a panic, a record outside the bytes
// or a leak.
func FuzzDecodeLogSegment(f *testing.F) {
	seg := fuzzSegment(f, [][]vt.Row{{{1, "a"}, {2, nil}}, {}, {{3, "ccc"}}})
	f.Add(seg)
	f.Add(seg[:len(seg)-5])     // torn tail
	f.Add(seg[:logHeaderLen+3]) // a record header cut short
	f.Add(append(bytes.Clone(seg), make([]byte, 100)...))
	flipped := bytes.Clone(seg)
	flipped[logHeaderLen+logRecHeaderLen+20] ^= 0xff // the first record's payload
	f.Add(flipped)
	f.Add([]byte{})
	f.Add([]byte("ASML\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		scan, err := decodeLogSegment("fuzz.seg", raw)
		if err != nil {
			return
		}
		if scan.valid > int64(len(raw)) || scan.torn == "" && scan.valid != int64(len(raw)) && len(raw) >= logHeaderLen {
			t.Fatalf("valid prefix %d of %d bytes, torn %q", scan.valid, len(raw), scan.torn)
		}
		for _, r := range scan.records {
			if r.ipc < logHeaderLen || r.n < 0 || r.ipc+r.n > scan.valid {
				t.Fatalf("record %+v outside the valid %d bytes", r, scan.valid)
			}
			body := raw[r.ipc : r.ipc+r.n]
			mem := &cappedAllocator{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
			_, _, recs, err := decodeIPC(mem, body)
			if err == nil {
				for _, rec := range recs {
					_ = vt.RowsOf(rec)
				}
			}
			releaseAll(recs)
			mem.AssertSize(t, 0)
		}
	})
}
