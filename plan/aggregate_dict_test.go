package plan_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

type schemaTable struct{ s *arrow.Schema }

func (t schemaTable) Schema() *arrow.Schema { return t.s }
func (t schemaTable) Streaming() bool       { return true }

// TestAggregateUnwrapsDictionaryKeys: the hash aggregate outputs a
// dictionary-encoded grouping key decoded, so the plan's schema must say
// the value type (a sink checks its input against it).
func TestAggregateUnwrapsDictionaryKeys(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vector.String}
	cat := plan.NewMemoryCatalog()
	cat.Register("t", schemaTable{arrow.NewSchema([]arrow.Field{{Name: "k", Type: dict}, {Name: "v", Type: vector.Int64}}, nil)})
	n, err := plan.Read(cat, "t")
	if err != nil {
		t.Fatal(err)
	}
	agg, err := plan.GroupBy(n, []string{"k"}, []string{"count(*) AS c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := agg.Schema().Field(0).Type; !arrow.TypeEqual(got, vector.String) {
		t.Fatalf("key type %s, want string", got)
	}
}
