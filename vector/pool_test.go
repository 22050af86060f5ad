package vector_test

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestPoolAllocatorReusesZeroedBuffers(t *testing.T) {
	under := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer under.AssertSize(t, 0)
	p := vector.NewPoolAllocator(under, 1<<20)
	defer p.Close()
	b := p.Allocate(100)
	for i := range b {
		b[i] = 0xff
	}
	p.Free(b)
	if p.Retained() != 128 {
		t.Fatalf("retained %d, want 128", p.Retained())
	}
	c := p.Allocate(120)
	if &c[0] != &b[0] {
		t.Error("buffer not reused")
	}
	for i, x := range c {
		if x != 0 {
			t.Fatalf("reused buffer not zeroed at %d", i)
		}
	}
	c = p.Reallocate(128, c)
	c = p.Reallocate(4096, c)
	if len(c) != 4096 {
		t.Fatal("reallocate length")
	}
	p.Free(c)
	// Retention is bounded.
	big := p.Allocate(2 << 20)
	p.Free(big)
	if p.Retained() > 1<<20 {
		t.Fatalf("retained %d beyond the bound", p.Retained())
	}
}

func TestPoolAllocatorUnderOperators(t *testing.T) {
	// Arrow's checked Go allocator, not the poisoning one: this test is
	// about the pool's own reuse under concurrent operators.
	under := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer under.AssertSize(t, 0)
	p := vector.NewPoolAllocator(under, 0)
	defer p.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.Int64, Nullable: true}}, nil)
	rows := make([]vt.Row, 5000)
	for i := range rows {
		if i%7 == 0 {
			rows[i] = vt.Row{nil}
		} else {
			rows[i] = vt.Row{i}
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 5; round++ {
				recs := vt.BuildRecords(p, schema, rows, vt.Shape{BatchSize: 1000})
				scan, _ := vector.NewScan(schema, recs...)
				for _, r := range recs {
					r.Release()
				}
				f, err := vector.NewFilter(p, scan, vector.Gt(vector.Col("a"), vector.Lit(int64(2500))))
				if err != nil {
					t.Error(err)
					return
				}
				out, err := vector.Drain(context.Background(), f)
				f.Close()
				if err != nil {
					t.Error(err)
					return
				}
				n := 0
				for _, r := range out {
					n += int(r.NumRows())
					r.Release()
				}
				if n != wantAbove(2500, 5000) {
					t.Errorf("filtered %d rows, want %d", n, wantAbove(2500, 5000))
				}
			}
		}()
	}
	wg.Wait()
}

func wantAbove(limit, n int) int {
	c := 0
	for i := limit + 1; i < n; i++ {
		if i%7 != 0 {
			c++
		}
	}
	return c
}

// TestPoolAllocatorOverPoisoningPassesThrough: a pool over the poisoning
// test allocator must not recycle a released buffer (it would hand out
// zeroed memory a stale value still points into, hiding the bug) and must
// let the release reach the poisoning allocator.
func TestPoolAllocatorOverPoisoningPassesThrough(t *testing.T) {
	under := poisonmem.NewChecked(t)
	p := vector.NewPoolAllocator(under, 1<<20)
	defer p.Close()
	b := p.Allocate(100)
	copy(b, "live")
	p.Free(b)
	if p.Retained() != 0 {
		t.Fatalf("pool over a poisoning allocator retained %d bytes", p.Retained())
	}
	if string(b[:4]) != "\xa5\xa5\xa5\xa5" {
		t.Fatalf("released buffer reads %q, want poisoned", b[:4])
	}
	c := p.Allocate(100)
	if &c[0] == &b[0] {
		t.Fatal("released buffer handed out again")
	}
	c = p.Reallocate(5000, c)
	p.Free(c)
}
