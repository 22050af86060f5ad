package memsink_test

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var (
	zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD} // a zstd frame's first bytes
	lz4Magic  = []byte{0x04, 0x22, 0x4D, 0x18} // an LZ4 frame's
)

// logBytes is the table's log segments of dir, concatenated in order.
func segBytes(t *testing.T, dir string) []byte {
	t.Helper()
	sink := filepath.Join(dir, memsink.SinkDir)
	ents, err := os.ReadDir(sink)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".seg") {
			names = append(names, e.Name())
		}
	}
	// By sequence number: shorter names first.
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	var out []byte
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(sink, n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// largeRows is n rows of 50-byte strings: 1.4 MB of columns at 20K
// rows, past the 1 MiB from which builds before session 29 wrote zstd.
func largeRows(first, n int) []vt.Row {
	rows := make([]vt.Row, n)
	for i := range rows {
		rows[i] = r(first+i, fmt.Sprintf("%050d", (first+i)*7919))
	}
	return rows
}

// TestPersistCodecs: a large epoch is written with LZ4 like a small one,
// and a log written with zstd (as earlier builds wrote large epochs)
// loads, continued by this build, from segments and from per-epoch files.
func TestPersistCodecs(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	e0, e1 := largeRows(0, 20000), []vt.Row{r(-1, "small")}
	e2, e3 := largeRows(20000, 20000), []vt.Row{r(-2, "small too")}

	old := appendTable(t, mem, dir, memsink.Options{})
	old.WriteZstdForTest()
	add(t, old, mem, 0, e0...)
	add(t, old, mem, 1, e1...)
	old.Close()
	before := segBytes(t, dir)
	if !bytes.Contains(before, zstdMagic) || bytes.Contains(before, lz4Magic) {
		t.Fatalf("the earlier build's log is not zstd only (zstd %v, lz4 %v)", bytes.Contains(before, zstdMagic), bytes.Contains(before, lz4Magic))
	}

	cont := appendTable(t, mem, dir, memsink.Options{})
	checkOrdered(t, "zstd log recovered", append(slices.Clone(e0), e1...), rowsOf(cont.AllData()))
	add(t, cont, mem, 2, e2...)
	add(t, cont, mem, 3, e3...)
	cont.Close()
	after := segBytes(t, dir)
	if !bytes.HasPrefix(after, before) {
		t.Fatal("continuing the log rewrote its earlier records")
	}
	added := after[len(before):]
	if !bytes.Contains(added, lz4Magic) || bytes.Contains(added, zstdMagic) {
		t.Fatalf("a large epoch is not written LZ4 only (zstd %v, lz4 %v)", bytes.Contains(added, zstdMagic), bytes.Contains(added, lz4Magic))
	}

	want := slices.Concat(e0, e1, e2, e3)
	again := appendTable(t, mem, dir, memsink.Options{})
	checkOrdered(t, "mixed log recovered", want, rowsOf(again.AllData()))
	again.Close()
	memsink.ToLegacyFiles(t, dir)
	files := appendTable(t, mem, dir, memsink.Options{})
	defer files.Close()
	checkOrdered(t, "per-epoch files, zstd and LZ4, recovered", want, rowsOf(files.AllData()))
}

// TestLogSmallEpochAfterLargeKeptBuffer: an epoch whose record is larger
// than the encode buffer the log kept before session 29 (4 MiB), so that
// the buffer is kept now, followed by a small epoch and an empty one:
// the small epochs' records hold only their own bytes, and all read back.
func TestLogSmallEpochAfterLargeKeptBuffer(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	tbl := appendTable(t, mem, dir, memsink.Options{})
	// Random hex does not compress much: about 6 MB of record.
	rng := rand.New(rand.NewPCG(1, 2))
	large := make([]vt.Row, 150_000)
	for i := range large {
		large[i] = r(i, fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64()))
	}
	add(t, tbl, mem, 0, large...)
	big := len(segBytes(t, dir))
	if big < 4<<20 {
		t.Fatalf("the large epoch's log is %d bytes, want more than 4 MiB", big)
	}
	add(t, tbl, mem, 1, r(7, "small"))
	small := len(segBytes(t, dir)) - big
	add(t, tbl, mem, 2)
	empty := len(segBytes(t, dir)) - big - small
	if small > 2048 || empty > 2048 {
		t.Fatalf("the small epoch's record is %d bytes, the empty one's %d: leftovers of the large epoch?", small, empty)
	}
	tbl.Close()
	again := appendTable(t, mem, dir, memsink.Options{})
	defer again.Close()
	checkOrdered(t, "after restart", append(slices.Clone(large), r(7, "small")), rowsOf(again.AllData()))
}
