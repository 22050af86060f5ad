package stateful

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestStatefulOperatorsLabelled: the planner gives each stateful
// operator an allocator labelled with its name, so that a limit its own
// Arrow buffers break (a join's stored rows) names it; before session 14
// they allocated on the query's allocator unlabelled.
func TestStatefulOperatorsLabelled(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var held int64
	lm := &labelledMem{CheckedAllocator: mem, limit: 1 << 40, held: &held}
	cat := plan.NewMemoryCatalog()
	cat.Register("l", &plan.SourceTable{TableSchema: liveInSchema})
	cat.Register("r", &plan.SourceTable{TableSchema: arrow.NewSchema([]arrow.Field{
		{Name: "k2", Type: vector.Int64},
		{Name: "t2", Type: vector.Timestamp},
	}, nil)})
	l, err := plan.Read(cat, "l")
	if err != nil {
		t.Fatal(err)
	}
	r, err := plan.Read(cat, "r")
	if err != nil {
		t.Fatal(err)
	}
	j, err := plan.JoinOn(l, r, "k = k2", "inner")
	if err != nil {
		t.Fatal(err)
	}
	op, ok, err := Planner{Mem: lm}.Plan(j, 3)
	if err != nil || !ok {
		t.Fatalf("planning a stream-stream join: %v (stateful %v)", err, ok)
	}
	sj, isJoin := op.(*statefulJoin)
	if !isJoin {
		t.Fatalf("planned a %T (is the test's join streaming?)", op)
	}
	defer sj.Close()
	got, _ := sj.mem.(*labelledMem)
	if got == nil || got.label != "stream-stream join (stateful operator 3)" {
		label := ""
		if got != nil {
			label = got.label
		}
		t.Errorf("the join allocates through %q, want it labelled %q", label, "stream-stream join (stateful operator 3)")
	}
}
