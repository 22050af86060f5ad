package memory

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// TestReadersConsumeIndependently: with two readers a block is released
// only once both committed it; a lagging reader still reads its rows; a
// closed reader no longer holds blocks back and cannot commit.
func TestReadersConsumeIndependently(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := New(mem, schema)
	defer s.Close()
	a, b := s.NewReader(), s.NewReader()
	var last stream.Offset
	for i := 0; i < 4; i++ {
		last = addBlock(t, s, int64(i*100), 100)
	}
	full := mem.CurrentAlloc()
	if n := drainCount(t, mustReadFrom(t, a, nil, last)); n != 400 {
		t.Fatalf("a read %d rows", n)
	}
	if err := a.Commit(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := mem.CurrentAlloc(); got != full {
		t.Fatalf("a's commit released blocks b has not read: %d of %d bytes held", got, full)
	}
	if n := drainCount(t, mustReadFrom(t, b, nil, stream.Offset("1"))); n != 200 {
		t.Fatalf("b read %d rows", n)
	}
	if err := b.Commit(ctx, stream.Offset("1")); err != nil {
		t.Fatal(err)
	}
	// Blocks 0 and 1 are released; b still reads 2 and 3.
	if got := mem.CurrentAlloc(); got > full*6/10 {
		t.Fatalf("after both committed 2 of 4 blocks %d of %d bytes are held", got, full)
	}
	if n := drainCount(t, mustReadFrom(t, b, stream.Offset("1"), last)); n != 200 {
		t.Fatalf("b's second read: %d rows", n)
	}
	// Closing b (its query stopped) releases what only it held.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mem.CurrentAlloc(); got != 0 {
		t.Fatalf("only a is open and it committed everything, %d bytes held", got)
	}
	if err := b.Commit(ctx, last); err == nil || !strings.Contains(err.Error(), "closed reader") {
		t.Fatalf("commit through a closed reader: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustReadFrom(t *testing.T, r *Reader, start, end stream.Offset) vector.Operator {
	t.Helper()
	if start == nil {
		start = stream.Offset("-1")
	}
	op, err := r.Read(context.Background(), start, end)
	if err != nil {
		t.Fatal(err)
	}
	return op
}
