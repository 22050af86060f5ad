package stateful

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// allocCount counts the allocations made through it.
type allocCount struct {
	memory.Allocator
	n int
}

func (a *allocCount) Allocate(size int) []byte {
	a.n++
	return a.Allocator.Allocate(size)
}

// TestJoinOutputSmallBuffersOneSlab: the join's output record takes its
// buffers other than string data from one allocation (the slab the
// gather prefaults): pairs over several stored batches of (int64, int64
// with nulls, string with nulls) on each side, so 2 string data buffers
// and one slab, where each column's values, offsets and bitmap were an
// allocation of their own (12 in all). The record's columns released one by
// one on a poisoning allocator keep the others intact.
func TestJoinOutputSmallBuffersOneSlab(t *testing.T) {
	pm := poisonmem.NewChecked(t)
	rng := rand.New(rand.NewSource(24))
	lrecs := []arrow.Record{splitTestRows(pm, rng, 300, 40).rec, splitTestRows(pm, rng, 200, 40).rec}
	rrecs := []arrow.Record{splitTestRows(pm, rng, 250, 40).rec, splitTestRows(pm, rng, 150, 40).rec}
	defer releaseRecords(lrecs)
	defer releaseRecords(rrecs)
	fields := append(append([]arrow.Field(nil), lrecs[0].Schema().Fields()...), rrecs[0].Schema().Fields()...)
	for k := range fields {
		fields[k].Name += string(rune('a' + k))
	}
	schema := arrow.NewSchema(fields, nil)
	var ps []joinOutPairs
	for g := 0; g < 6; g++ {
		l, r := lrecs[g%2], rrecs[(g/2)%2]
		p := joinOutPairs{l: l, r: r}
		for k := 0; k < 500; k++ {
			p.li = append(p.li, int32(rng.Intn(int(l.NumRows()))))
			p.ri = append(p.ri, int32(rng.Intn(int(r.NumRows()))))
		}
		ps = append(ps, p)
	}
	plain := &statefulJoin{mem: pm, keep: pm}
	want, err := plain.gatherPairs(ps, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	count := &allocCount{Allocator: pm}
	s := &statefulJoin{mem: count, keep: count}
	got, err := s.gatherPairs(ps, schema)
	if err != nil {
		t.Fatal(err)
	}
	if count.n > 3 {
		t.Errorf("the output record took %d allocations, want at most 3 (the slab and 2 string data buffers)", count.n)
	}
	cols := got.Columns()
	for _, c := range cols {
		c.Retain()
	}
	got.Release()
	for i := range cols {
		for j := i; j < len(cols); j++ {
			if !array.Equal(cols[j], want.Column(j)) {
				t.Fatalf("column %d differs from its plain gather after %d columns released", j, i)
			}
		}
		cols[i].Release()
	}
}
