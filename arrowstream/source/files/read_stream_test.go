package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// limitedMem is a checked allocator that also reserves Go-heap bytes
// against a limit (as the server's per-query allocator does) and records
// the largest reservation.
type limitedMem struct {
	*memory.CheckedAllocator
	limit, held, peak int64
}

var errOverLimit = errors.New("over the test limit")

func (m *limitedMem) Reserve(n int64) error {
	if m.held+n > m.limit {
		return fmt.Errorf("reserving %d more of %d: %w", n, m.limit, errOverLimit)
	}
	m.held += n
	m.peak = max(m.peak, m.held)
	return nil
}

var _ vector.MemoryReserver = (*limitedMem)(nil)

// readFileRows reads path with a CSV source on mem and returns its row
// count or the error.
func readFileRows(t *testing.T, mem memory.Allocator, path string) (int64, error) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.Int64, Nullable: true}, {Name: "name", Type: vector.String, Nullable: true}}, nil)
	s, err := NewSource(mem, schema, Options{Format: CSV, Path: path, Mode: FailFast, Sep: ',', ChunkBytes: DefaultChunkBytes, Header: true})
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var rows int64
	for {
		rec, err := op.Next(context.Background())
		if isEOF(err) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows += rec.NumRows()
		rec.Release()
	}
}

// TestFileReadAsStream: a 24 MB CSV file under a 16 MiB limit is read
// whole (every row), holding a window of a few megabytes at most; its
// reservation is returned at Close and the allocator ends at zero.
func TestFileReadAsStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.csv")
	var b strings.Builder
	b.WriteString("id,name\n")
	const rows = 800_000
	for i := range rows {
		fmt.Fprintf(&b, "%d,name-%019d\n", i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	n, err := readFileRows(t, mem, path)
	if err != nil || n != rows {
		t.Fatalf("read %d rows (%v), want %d", n, err, rows)
	}
	if mem.peak > 4<<20 || mem.peak == 0 {
		t.Fatalf("the read reserved at most %d bytes for a %d-byte file, want a window of at most 4 MiB", mem.peak, b.Len())
	}
	if mem.held != 0 {
		t.Fatalf("%d bytes still reserved after Close", mem.held)
	}
	mem.AssertSize(t, 0)
}

// TestFileLineOverLimitRefused: a 1 GB file without a line end (sparse:
// it costs no disk) under a 16 MiB limit is refused with the limit's
// error naming the file once the window would pass the limit; the read
// stops there (the reservation never passed the limit) and nothing stays
// allocated or reserved.
func TestFileLineOverLimitRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("id,name\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	_, err = readFileRows(t, mem, path)
	if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want the limit's error naming %s", err, path)
	}
	if mem.peak > mem.limit || mem.held != 0 {
		t.Fatalf("peak reservation %d (limit %d), %d still held", mem.peak, mem.limit, mem.held)
	}
	mem.AssertSize(t, 0)
}

// lineFileOn opens path (a CSV file with a header) on mem as a lineFile
// read as a stream.
func lineFileOn(t *testing.T, mem memory.Allocator, path string) *lineFile {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.Int64, Nullable: true}, {Name: "name", Type: vector.String, Nullable: true}}, nil)
	s, err := NewSource(mem, schema, Options{Format: CSV, Path: path, Mode: FailFast, Sep: ',', ChunkBytes: DefaultChunkBytes, Header: true})
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	lf, ok := op.(*lineFile)
	if !ok || lf.stream == nil {
		t.Fatalf("open gave %T, want a *lineFile read as a stream", op)
	}
	return lf
}

// TestFileLineGrowthReserved: growing the window for a line longer than
// it holds the old and the new window at once (the copy); the bytes held
// then must never pass what is reserved, so that a 1 GB line is refused
// under a 16 MiB limit with the windows held never over the limit (the
// growth alone reserved let them reach 24 MiB: 8 MiB copied into 16).
// A line of 9.5 MiB under a 20 MiB limit, which a window can hold within
// the limit only by growing by less than doubling (8 + 16 MiB would not
// fit while copied, 8 + 9 and then 9 + 10 do), is still read.
func TestFileLineGrowthReserved(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.csv")
	if err := os.WriteFile(huge, []byte("id,name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<30); err != nil {
		t.Fatal(err)
	}
	mem := &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 16 << 20}
	lf := lineFileOn(t, mem, huge)
	st := lf.stream
	var err error
	for err == nil {
		var rec arrow.Record
		if rec, err = lf.Next(context.Background()); err == nil {
			rec.Release()
		}
	}
	lf.Close()
	if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), huge) {
		t.Fatalf("got %v, want the limit's error naming %s", err, huge)
	}
	if st.peakHeld > mem.peak || mem.peak > mem.limit {
		t.Fatalf("windows held up to %d bytes at once, reserved at most %d (limit %d)", st.peakHeld, mem.peak, mem.limit)
	}
	if mem.held != 0 {
		t.Fatalf("%d bytes still reserved after Close", mem.held)
	}
	mem.AssertSize(t, 0)

	long := filepath.Join(dir, "long.csv")
	line := "1," + strings.Repeat("n", 9<<20+512<<10)
	if err := os.WriteFile(long, []byte("id,name\n"+line+"\n2,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mem = &limitedMem{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 20 << 20}
	if n, err := readFileRows(t, mem, long); err != nil || n != 2 {
		t.Fatalf("read %d rows (%v) of a file with a 9.5 MiB line under a 20 MiB limit, want 2", n, err)
	}
	if mem.held != 0 || mem.peak > mem.limit {
		t.Fatalf("reserved at most %d (limit %d), %d still held", mem.peak, mem.limit, mem.held)
	}
	mem.AssertSize(t, 0)
}
