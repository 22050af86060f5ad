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
