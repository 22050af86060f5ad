package checkpoint

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// encodeStateLegacy is the encoder state files were written with before the
// shared codec: arrow's IPC buffer compression (a new zstd encoder per file,
// level SpeedDefault). It stays here to check that such files still decode
// and as the baseline of BenchmarkEncodeState.
func encodeStateLegacy(mem memory.Allocator, keys []string, values map[string][]byte, deleted map[string]bool) ([]byte, error) {
	b, err := stateIPC(mem, keys, values, deleted, ipc.WithZstd())
	if err != nil {
		return nil, err
	}
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(b, castagnoli))
	copy(tr[4:], stateMagic[:])
	return append(b, tr[:]...), nil
}

// stateIPC writes the state entries as one record of an Arrow IPC stream,
// with the writer options opts (the tests' encoders differ only in those
// and in what they do with the stream).
func stateIPC(mem memory.Allocator, keys []string, values map[string][]byte, deleted map[string]bool, opts ...ipc.Option) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(stateSchema), ipc.WithAllocator(mem)}, opts...)...)
	kb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	vb := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	defer kb.Release()
	defer vb.Release()
	for _, k := range keys {
		kb.AppendString(k)
		if deleted[k] {
			vb.AppendNull()
		} else {
			vb.Append(values[k])
		}
	}
	k, v := kb.NewArray(), vb.NewArray()
	rec := array.NewRecord(stateSchema, []arrow.Array{k, v}, int64(k.Len()))
	k.Release()
	v.Release()
	err := w.Write(rec)
	rec.Release()
	if err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// testState is n aggregation-like entries (a grouping key, an 8-byte
// count) with every tenth key deleted.
func testState(n int) (keys []string, values map[string][]byte, deleted map[string]bool) {
	values, deleted = map[string][]byte{}, map[string]bool{}
	for i := range n {
		k := fmt.Sprintf("campaign-%08d|window-%d", i%1000, i/1000)
		keys = append(keys, k)
		if i%10 == 9 {
			deleted[k] = true
			continue
		}
		v := make([]byte, 8)
		binary.LittleEndian.PutUint64(v, uint64(i*7))
		values[k] = v
	}
	sort.Strings(keys)
	return keys, values, deleted
}

func TestStateCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name       string
		entries    int
		legacy     bool
		compressed bool // the body is one zstd frame
	}{
		{"empty", 0, false, false},
		{"small-stored-plain", 10, false, false},
		{"large-one-zstd-frame", 5000, false, true},
		{"more-than-one-ipc-batch", 70_000, false, true},
		{"legacy-ipc-zstd", 5000, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			keys, values, deleted := testState(tc.entries)
			enc := encodeState
			if tc.legacy {
				enc = encodeStateLegacy
			}
			raw, err := enc(mem, keys, values, deleted)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.HasPrefix(raw, zstdFrameMagic); got != tc.compressed {
				t.Fatalf("zstd frame: %v, want %v", got, tc.compressed)
			}
			// Decoding applies deletes to what is there: start from a state
			// that holds every key, expect only the live ones back.
			got := map[string][]byte{}
			for _, k := range keys {
				got[k] = []byte("old")
			}
			if err := decodeState(mem, raw, got); err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, values, bytes.Equal) {
				t.Fatalf("decoded %d entries, want %d (or different values)", len(got), len(values))
			}
		})
	}
}

// TestStateCodecRejectsBadFrame checks that a zstd body that passes the
// checksum but is not a valid frame is an ErrCorrupt, not a panic.
func TestStateCodecRejectsBadFrame(t *testing.T) {
	body := append(bytes.Clone(zstdFrameMagic), 0xff, 0xff, 0xff, 0xff, 1, 2, 3)
	var tr [8]byte
	binary.LittleEndian.PutUint32(tr[:4], crc32.Checksum(body, castagnoli))
	copy(tr[4:], stateMagic[:])
	err := decodeState(memory.NewGoAllocator(), append(body, tr[:]...), map[string][]byte{})
	if err == nil {
		t.Fatal("a bad zstd frame decoded")
	}
}

// BenchmarkEncodeState compares, in one run, the legacy encoder (arrow IPC
// buffer compression, one zstd encoder per file) with the shared codec at
// the chosen level and at SpeedDefault, on a small delta (100 entries, the
// size of a YSB epoch's changes) and a large snapshot (100K entries). The
// bytes/entry metric shows what each level costs in file size.
func BenchmarkEncodeState(b *testing.B) {
	mem := memory.NewGoAllocator()
	defaultEnc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(false))
	if err != nil {
		b.Fatal(err)
	}
	// sharedDefault is encodeState with SpeedDefault instead of SpeedFastest.
	sharedDefault := func(mem memory.Allocator, keys []string, values map[string][]byte, deleted map[string]bool) ([]byte, error) {
		b, err := stateIPC(mem, keys, values, deleted)
		if err != nil {
			return nil, err
		}
		return defaultEnc.EncodeAll(b, nil), nil
	}
	for _, n := range []int{100, 100_000} {
		keys, values, deleted := testState(n)
		for _, c := range []struct {
			name string
			enc  func(memory.Allocator, []string, map[string][]byte, map[string]bool) ([]byte, error)
		}{
			{"legacy-ipc-zstd", encodeStateLegacy},
			{"shared-fastest", encodeState},
			{"shared-default", sharedDefault},
		} {
			b.Run(fmt.Sprintf("entries=%d/%s", n, c.name), func(b *testing.B) {
				var size int
				for b.Loop() {
					raw, err := c.enc(mem, keys, values, deleted)
					if err != nil {
						b.Fatal(err)
					}
					size = len(raw)
				}
				b.ReportMetric(float64(size)/float64(n), "bytes/entry")
			})
		}
	}
}

// BenchmarkDecodeState compares decoding a legacy file (a new zstd decoder
// per file inside arrow's IPC reader) with the shared decoder.
func BenchmarkDecodeState(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, n := range []int{100, 100_000} {
		keys, values, deleted := testState(n)
		for _, c := range []struct {
			name string
			enc  func(memory.Allocator, []string, map[string][]byte, map[string]bool) ([]byte, error)
		}{
			{"legacy-ipc-zstd", encodeStateLegacy},
			{"shared-fastest", encodeState},
		} {
			raw, err := c.enc(mem, keys, values, deleted)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("entries=%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					if err := decodeState(mem, raw, make(map[string][]byte, n)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
