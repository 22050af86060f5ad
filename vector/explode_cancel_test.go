package vector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestExplodeStopsOnCancel: one input batch whose arrays explode to many
// output records (4 arrays of 100K elements: 7 records) stops at the
// first Next after its context is cancelled, with context.Canceled,
// although its input is not asked again; Close releases the batch (the
// checked allocator ends at zero).
func TestExplodeStopsOnCancel(t *testing.T) {
	mem := vt.NewAllocator(t)
	s := arrow.NewSchema([]arrow.Field{{Name: "xs", Type: vector.ListOf(vector.Int64)}}, nil)
	var rows []vt.Row
	for range 4 {
		xs := make([]any, 100_000)
		for j := range xs {
			xs[j] = j
		}
		rows = append(rows, vt.Row{xs})
	}
	rec := vt.BuildRecord(mem, s, rows)
	defer rec.Release()
	e, err := vector.NewExplode(mem, opsScan(t, rec), vector.Col("xs"), "x", []int{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, err := e.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out.Release()
	cancel()
	if out, err := e.Next(ctx); !errors.Is(err, context.Canceled) {
		if out != nil {
			out.Release()
		}
		t.Fatalf("Next after the cancel: %v, want context.Canceled", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}
