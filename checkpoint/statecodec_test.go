package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"sync"
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
	return stateTrailer(b), nil
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

// encodeStateV1 writes a state file of format v1 as the builds before v2
// did: one Arrow IPC stream (its schema carrying format, when not empty),
// as one zstd frame (SpeedFastest) from stateCompressMin bytes, plus the
// trailer. It checks that such files still decode and is the baseline of
// BenchmarkEncodeState.
func encodeStateV1(mem memory.Allocator, keys []string, values map[string][]byte, deleted map[string]bool, format string) ([]byte, error) {
	schema := stateSchema
	if format != "" {
		md := arrow.NewMetadata([]string{stateFormatKey}, []string{format})
		schema = arrow.NewSchema(stateFields, &md)
	}
	b, err := stateIPC(mem, keys, values, deleted, ipc.WithSchema(schema))
	if err != nil {
		return nil, err
	}
	if len(b) >= stateCompressMin {
		b = v1Zstd(b)
	}
	return stateTrailer(b), nil
}

var v1Encoder = sync.OnceValue(func() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
	if err != nil {
		panic(err)
	}
	return enc
})

func v1Zstd(b []byte) []byte { return v1Encoder().EncodeAll(b, nil) }

func encodeStateV1Fastest(mem memory.Allocator, keys []string, values map[string][]byte, deleted map[string]bool) ([]byte, error) {
	return encodeStateV1(mem, keys, values, deleted, "1")
}

func TestStateCodecRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries int
		enc     func(memory.Allocator, []string, map[string][]byte, map[string]bool) ([]byte, error)
		prefix  []byte // the body starts so
	}{
		{"empty", 0, encodeState, []byte("ASC2\x00")},
		{"small-stored-plain", 10, encodeState, []byte("ASC2\x00")},
		{"large-s2", 5000, encodeState, []byte("ASC2\x01")},
		{"more-than-one-chunk", 70_000, encodeState, []byte("ASC2\x01")},
		{"v1-small-ipc", 10, encodeStateV1Fastest, []byte{0xff, 0xff, 0xff, 0xff}},
		{"v1-one-zstd-frame", 5000, encodeStateV1Fastest, zstdFrameMagic},
		{"v1-ipc-zstd-buffers", 5000, encodeStateLegacy, []byte{0xff, 0xff, 0xff, 0xff}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			keys, values, deleted := testState(tc.entries)
			raw, err := tc.enc(mem, keys, values, deleted)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(raw, tc.prefix) {
				t.Fatalf("body starts %x, want %x", raw[:min(8, len(raw))], tc.prefix)
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

// TestChangelogChunkMatchesMapEncoding: a changelog's chunk (its arena
// reused after an earlier epoch's entries) decodes to what the map
// encoder's file decodes to, deletes and empty values included.
func TestChangelogChunkMatchesMapEncoding(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	keys, values, deleted := testState(3000)
	values[keys[1]] = []byte{}
	var a changeArena
	a.add([]byte("skipped"), []byte("skipped"), true)
	a.add([]byte("gone"), nil, false)
	a.reset()
	for _, k := range keys {
		a.add([]byte(k), values[k], !deleted[k])
	}
	raw, err := encodeChangelog(&a)
	if err != nil {
		t.Fatal(err)
	}
	want, err := encodeState(mem, keys, values, deleted)
	if err != nil {
		t.Fatal(err)
	}
	got, exp := map[string][]byte{"x": nil}, map[string][]byte{"x": nil}
	for _, k := range keys {
		got[k], exp[k] = []byte("old"), []byte("old")
	}
	if err := decodeState(mem, raw, got); err != nil {
		t.Fatal(err)
	}
	if err := decodeState(mem, want, exp); err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, exp, bytes.Equal) || len(got) != len(values)+1 {
		t.Fatalf("changelog decodes to %d entries, map encoding to %d", len(got), len(exp))
	}
}

// TestStateColumnsRejectsDamage: a v2 body that passes the checksum but
// is damaged (lengths, offsets, codec, S2 block) is an ErrCorrupt, never a
// panic, and a newer format is ErrNewerFormat.
func TestStateColumnsRejectsDamage(t *testing.T) {
	mem := memory.NewGoAllocator()
	keys, values, deleted := testState(20)
	raw, err := encodeState(mem, keys, values, deleted)
	if err != nil {
		t.Fatal(err)
	}
	body := raw[:len(raw)-8]
	chunk := 5 // after magic and codec
	patch := func(off int, b ...byte) []byte {
		d := bytes.Clone(body)
		copy(d[off:], b)
		return stateTrailer(d)
	}
	for _, c := range []struct {
		name string
		raw  []byte
		want error
	}{
		{"codec", patch(4, 7), ErrCorrupt},
		{"rows-huge", patch(chunk, 0xff, 0xff, 0xff, 0x7f), ErrCorrupt},
		{"rows-zero", patch(chunk, 0, 0, 0, 0), ErrCorrupt},
		{"key-bytes", patch(chunk+4, 0xff), ErrCorrupt},
		{"first-offset", patch(chunk+12, 1), ErrCorrupt},
		{"offset-decreases", patch(chunk+12+8, 0xff, 0xff), ErrCorrupt},
		{"truncated", stateTrailer(bytes.Clone(body[:len(body)-3])), ErrCorrupt},
		{"header-only", stateTrailer([]byte("ASC2")), ErrCorrupt},
		{"s2-garbage", stateTrailer(append([]byte("ASC2\x01"), 0x10, 0xff, 0xff, 0xff)), ErrCorrupt},
		{"s2-huge", stateTrailer(append([]byte("ASC2\x01"), 0xff, 0xff, 0xff, 0xff, 0x0f)), ErrCorrupt},
		{"newer", patch(3, '3'), ErrNewerFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := decodeStateBounded(mem, c.raw, map[string][]byte{}, 1<<20)
			if !errors.Is(err, c.want) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("want %v, got %v", c.want, err)
			}
		})
	}
}

// TestStateCodecRejectsBadFrame checks that a zstd body that passes the
// checksum but is not a valid frame is an ErrCorrupt, not a panic.
func TestStateCodecRejectsBadFrame(t *testing.T) {
	body := append(bytes.Clone(zstdFrameMagic), 0xff, 0xff, 0xff, 0xff, 1, 2, 3)
	err := decodeState(memory.NewGoAllocator(), stateTrailer(body), map[string][]byte{})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a bad zstd frame: %v", err)
	}
}

// BenchmarkEncodeState compares, in one run, the v1 encoders (arrow IPC
// buffer compression with one zstd encoder per file; an IPC stream in one
// zstd frame of a shared SpeedFastest encoder) with v2 (the columns'
// buffers, S2), on a small delta (100 entries, the size of a YSB epoch's
// changes) and a large snapshot (100K entries). bytes/entry shows what
// each costs in file size.
func BenchmarkEncodeState(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, n := range []int{100, 100_000} {
		keys, values, deleted := testState(n)
		for _, c := range []struct {
			name string
			enc  func(memory.Allocator, []string, map[string][]byte, map[string]bool) ([]byte, error)
		}{
			{"v1-ipc-zstd-buffers", encodeStateLegacy},
			{"v1-ipc-zstd-fastest", encodeStateV1Fastest},
			{"v2-columns-s2", encodeState},
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

// BenchmarkDecodeState compares decoding the v1 files with v2.
func BenchmarkDecodeState(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, n := range []int{100, 100_000} {
		keys, values, deleted := testState(n)
		for _, c := range []struct {
			name string
			enc  func(memory.Allocator, []string, map[string][]byte, map[string]bool) ([]byte, error)
		}{
			{"v1-ipc-zstd-buffers", encodeStateLegacy},
			{"v1-ipc-zstd-fastest", encodeStateV1Fastest},
			{"v2-columns-s2", encodeState},
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

// TestStateCodecStoresIncompressible: a large body S2 cannot shrink (random
// bytes, as the rows a join keeps mostly are) is stored without
// compression, a large compressible one is compressed, and both decode.
func TestStateCodecStoresIncompressible(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		value  func(i int) []byte
		prefix string
	}{
		{"random", func(int) []byte {
			b := make([]byte, 1000)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return b
		}, "ASC2\x00"},
		{"repetitive", func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 1000) }, "ASC2\x01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := map[string][]byte{}
			var keys []string
			for i := range 400 {
				k := fmt.Sprintf("k%04d", i)
				keys = append(keys, k)
				values[k] = tc.value(i)
			}
			raw, err := encodeState(nil, keys, values, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(raw, []byte(tc.prefix)) {
				t.Fatalf("body starts %q, want %q", raw[:5], tc.prefix)
			}
			got := map[string][]byte{}
			if err := decodeState(memory.NewGoAllocator(), raw, got); err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, values, bytes.Equal) {
				t.Fatal("decoded state differs")
			}
		})
	}
}
