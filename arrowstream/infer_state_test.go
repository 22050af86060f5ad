package arrowstream

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestInferredFilterShrinksJoinState: in a stream-stream join on
// k = k2 AND k2 % 2 = 0 the optimizer infers k % 2 = 0 for the other
// input (plan.InferFilters), so that side's odd rows never enter the
// join's state. The same join written so that nothing can be inferred
// ((k2 + 0) % 2: + may overflow, so it is not transferred) gives the
// same answer and keeps every row of that side.
func TestInferredFilterShrinksJoinState(t *testing.T) {
	run := func(cond string) (rows []vt.Row, stateRows int64) {
		ctx := context.Background()
		s, mem := newTestSession(t)
		a, b := NewMemoryStream(mem, valueSchema), NewMemoryStream(mem, valueSchema)
		defer a.Close()
		defer b.Close()
		s.RegisterStream("a", a)
		s.RegisterStream("b", b)
		sink := &collectsink.Sink{}
		left := s.ReadStream("a").Select("value AS k")
		right := s.ReadStream("b").Select("value AS k2")
		q, err := left.Join(right, cond, "inner").WriteStream().Sink(sink).OutputMode(Append).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop()
		for epoch := 0; epoch < 2; epoch++ {
			var vals []int
			for v := epoch * 50; v < epoch*50+50; v++ {
				vals = append(vals, v)
			}
			addInts(t, a, vals...)
			addInts(t, b, vals...)
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
		}
		p := q.LastProgress()
		if p == nil || len(p.StateOperators) != 1 {
			t.Fatalf("progress: %+v", p)
		}
		return vt.SortRows(sink.All()), p.StateOperators[0].NumRowsTotal
	}
	inferred, withInference := run("k = k2 AND k2 % 2 = 0")
	plain, without := run("k = k2 AND (k2 + 0) % 2 = 0")
	if !vt.RowsEqual(inferred, plain) || len(plain) != 50 {
		t.Fatalf("answers differ or are wrong:\n%s\nvs\n%s", vt.FormatRows(inferred), vt.FormatRows(plain))
	}
	t.Logf("join state rows: %d with the inferred filter, %d without", withInference, without)
	// 100 rows per input: 50 even ones of each side with inference;
	// all 100 of a and 50 of b without.
	if withInference != 100 || without != 150 {
		t.Errorf("state rows %d with the inferred filter, %d without; want 100 and 150", withInference, without)
	}
}
