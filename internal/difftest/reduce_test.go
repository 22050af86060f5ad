package difftest

import (
	"context"
	"testing"
)

// A mismatch that does not reproduce is kept as it is, and removing a row
// keeps the batch structure of the others.
func TestReduceKeepsUnreproducibleAndRemovesRows(t *testing.T) {
	tb := &Table{Name: "t0", Columns: []Column{{Name: "a0", Kind: KInt64}}}
	for i := int64(0); i < 20; i++ {
		tb.Rows = append(tb.Rows, []Value{i})
	}
	tb.Batches = []int{7, 13}
	// An optimizer "mismatch" that cannot reproduce: the reducer returns
	// the original.
	m := &Mismatch{Oracle: OracleOptimizer, Tables: []*Table{tb}, Query: "SELECT a0 FROM t0 WHERE a0 > 3"}
	if got := ReduceMismatch(context.Background(), m, Options{}); got != m {
		t.Fatal("a mismatch that does not reproduce was replaced")
	}
	withoutRow := tb.withoutRow(8)
	if len(withoutRow.Rows) != 19 || withoutRow.Batches[0] != 7 || withoutRow.Batches[1] != 12 {
		t.Fatalf("withoutRow(8): %d rows, batches %v", len(withoutRow.Rows), withoutRow.Batches)
	}
	if len(tb.Rows) != 20 {
		t.Fatal("withoutRow changed its receiver")
	}
}
