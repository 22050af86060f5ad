package stateful

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

var errLabelLimit = errors.New("over the test limit")

// labelledMem is a checked allocator with a reservation limit whose
// refusals name the operator label they came through (as the server's
// query allocator's do); unlabelled reservations say "an unnamed
// operator".
type labelledMem struct {
	*memory.CheckedAllocator
	limit int64
	held  *int64
	label string
}

func (m *labelledMem) Reserve(n int64) error {
	if n > 0 && *m.held+n > m.limit {
		op := m.label
		if op == "" {
			op = "an unnamed operator"
		}
		return fmt.Errorf("%d more bytes in %s: %w", n, op, errLabelLimit)
	}
	*m.held += n
	return nil
}

func (m *labelledMem) ForOperator(name string) memory.Allocator {
	c := *m
	c.label = name
	return &c
}

// TestEpochAggregationsLabelled: the hash aggregations a streaming epoch
// runs inside the stateful aggregation (the epoch's partial aggregation,
// the finalizing one) reserve through a labelled allocator, so a limit
// error names them instead of "an unnamed operator".
func TestEpochAggregationsLabelled(t *testing.T) {
	const rows = 200_000
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var held int64
	lm := &labelledMem{CheckedAllocator: mem, limit: 1 << 20, held: &held}
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}}, nil)
	newInput := func() vector.Operator {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range rows {
			b.Append(int64(i))
		}
		col := b.NewArray()
		defer col.Release()
		rec := array.NewRecord(schema, []arrow.Array{col}, rows)
		defer rec.Release()
		scan, err := vector.NewScan(schema, rec)
		if err != nil {
			t.Fatal(err)
		}
		return scan
	}
	spec := vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
	}
	_, err := partialAggregate(context.Background(), lm, newInput(), spec)
	if err == nil || !strings.Contains(err.Error(), partialAggName) {
		t.Fatalf("partial aggregation of %d groups under 1 MiB: %v, want an error naming %q", rows, err, partialAggName)
	}
	if held != 0 {
		t.Errorf("%d bytes still reserved", held)
	}

	// The finalizing aggregation over the epoch's partial records.
	big := &labelledMem{CheckedAllocator: mem, limit: 1 << 40, held: &held}
	recs, err := partialAggregate(context.Background(), big, newInput(), spec)
	if err != nil {
		t.Fatal(err)
	}
	partial := recs[0].Schema()
	op, err := finalizePartial(lm, partial, vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
	}, recs)
	if err == nil {
		_, err = vector.Drain(context.Background(), op)
		op.Close()
	}
	if err == nil || !strings.Contains(err.Error(), finalizeAggName) {
		t.Fatalf("finalizing %d groups under 1 MiB: %v, want an error naming %q", rows, err, finalizeAggName)
	}
	if held != 0 {
		t.Errorf("%d bytes still reserved", held)
	}
}
