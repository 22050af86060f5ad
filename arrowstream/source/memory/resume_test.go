package memory

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// TestResume: a stream that lived through a query's restart is left as
// it is; a recreated one numbers its blocks after the query's last
// recorded offset, reads the lost range as empty, and refuses to renumber
// blocks another query has already read.
func TestResume(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	read := func(s *Stream, from, to string) int64 {
		t.Helper()
		var start stream.Offset
		if from != "" {
			start = stream.Offset(from)
		}
		op, err := s.Read(ctx, start, stream.Offset(to))
		if err != nil {
			t.Fatalf("Read(%s, %s]: %v", from, to, err)
		}
		return drainCount(t, op)
	}

	t.Run("alive", func(t *testing.T) {
		s := New(mem, schema)
		defer s.Close()
		addBlock(t, s, 0, 2)
		addBlock(t, s, 2, 2)
		if err := s.Resume(stream.Offset("0")); err != nil {
			t.Fatal(err)
		}
		if off, _ := s.LatestOffset(ctx); string(off) != "1" {
			t.Fatalf("latest %s, want 1 (nothing renumbered)", off)
		}
		if n := read(s, "0", "1"); n != 2 {
			t.Fatalf("read %d rows", n)
		}
	})

	t.Run("recreated", func(t *testing.T) {
		s := New(mem, schema)
		defer s.Close()
		addBlock(t, s, 100, 3) // pushed after the restart, before the query resumed
		if err := s.Resume(stream.Offset("7")); err != nil {
			t.Fatal(err)
		}
		if off, _ := s.LatestOffset(ctx); string(off) != "8" {
			t.Fatalf("latest %s, want 8", off)
		}
		if off := addBlock(t, s, 200, 1); string(off) != "9" {
			t.Fatalf("next block at %s, want 9", off)
		}
		// The batch the query re-runs, (5, 7], was lost: empty, not an error.
		if n := read(s, "5", "7"); n != 0 {
			t.Fatalf("lost range read %d rows", n)
		}
		if n := read(s, "7", "9"); n != 4 {
			t.Fatalf("read %d rows after the resume point, want 4", n)
		}
		// A query resuming at or below the stream's end changes nothing;
		// one resuming past blocks a query has read would see them twice
		// under new numbers, so it fails.
		if err := s.Resume(stream.Offset("3")); err != nil {
			t.Fatalf("resume below the stream's end: %v", err)
		}
		err := s.Resume(stream.Offset("20"))
		if err == nil || !strings.Contains(err.Error(), "another query has already read") {
			t.Fatalf("resume past blocks already read: %v", err)
		}
	})
}
