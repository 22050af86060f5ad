package memory

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

var schema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.Int64, Nullable: true}}, nil)

func addBlock(t *testing.T, s *Stream, first int64, n int) stream.Offset {
	t.Helper()
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{first + int64(i)}
	}
	off, err := s.AddData(rows...)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

func drainCount(t *testing.T, op vector.Operator) int64 {
	t.Helper()
	defer op.Close()
	var n int64
	for {
		rec, err := op.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n += rec.NumRows()
		rec.Release()
	}
}

// TestCommitReleasesConsumedBlocks: the bytes of committed blocks go back
// to the allocator at Commit, uncommitted ones stay readable, and a stream
// fed and committed for many rounds holds only its live blocks.
func TestCommitReleasesConsumedBlocks(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := New(mem, schema)
	defer s.Close()

	var last stream.Offset
	for b := 0; b < 10; b++ {
		last = addBlock(t, s, int64(b*1000), 1000)
	}
	full := mem.CurrentAlloc()
	if full < 10*1000*8 {
		t.Fatalf("10 blocks of 1000 int64 hold only %d bytes", full)
	}
	// A query reads (-1, 6] and commits 6: blocks 0..6 are released.
	if n := drainCount(t, mustRead(t, s, nil, stream.Offset("6"))); n != 7000 {
		t.Fatalf("read %d rows, want 7000", n)
	}
	if err := s.Commit(ctx, stream.Offset("6")); err != nil {
		t.Fatal(err)
	}
	after := mem.CurrentAlloc()
	if after > full*4/10 {
		t.Fatalf("after committing 7 of 10 blocks the stream holds %d of %d bytes", after, full)
	}
	if n := drainCount(t, mustRead(t, s, stream.Offset("6"), last)); n != 3000 {
		t.Fatalf("uncommitted blocks: %d rows, want 3000", n)
	}
	if _, err := s.Read(ctx, stream.Offset("2"), last); err == nil || !strings.Contains(err.Error(), "committed") {
		t.Fatalf("reading committed data: %v", err)
	}
	// Committing the same or an earlier offset again is harmless.
	if err := s.Commit(ctx, stream.Offset("3")); err != nil {
		t.Fatal(err)
	}

	// Steady state: feed and commit many rounds; the memory held is that
	// of the blocks not yet committed, not of everything ever added.
	if err := s.Commit(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := mem.CurrentAlloc(); got != 0 {
		t.Fatalf("everything committed, %d bytes held", got)
	}
	for round := 0; round < 200; round++ {
		off := addBlock(t, s, int64(round), 1000)
		if err := s.Commit(ctx, off); err != nil {
			t.Fatal(err)
		}
		if got := mem.CurrentAlloc(); got != 0 {
			t.Fatalf("round %d: %d bytes held after commit", round, got)
		}
	}
	if cap(s.blocks) > 16 {
		t.Fatalf("block slice grew to capacity %d with at most one live block", cap(s.blocks))
	}
}

func mustRead(t *testing.T, s *Stream, start, end stream.Offset) vector.Operator {
	t.Helper()
	if start == nil {
		start = stream.Offset("-1")
	}
	op, err := s.Read(context.Background(), start, end)
	if err != nil {
		t.Fatal(err)
	}
	return op
}
