package stateful

import (
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// dropLate keeps the selected rows, counts the others, leaves a record
// that keeps every row untouched, and owns exactly one reference per slot
// (the checked allocator ends at zero).
func TestDropLate(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "t", Type: arrow.PrimitiveTypes.Int64}}, nil)
	mk := func(vals ...int64) arrow.Record {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.AppendValues(vals, nil)
		col := b.NewArray()
		defer col.Release()
		return array.NewRecord(schema, []arrow.Array{col}, int64(len(vals)))
	}
	recs := []arrow.Record{mk(1, 5, 9), mk(7, 8), mk(2)}
	untouched := recs[1]
	dropped, err := dropLate(mem, recs, func(rec arrow.Record) []int32 {
		var keep []int32
		for i, v := range rec.Column(0).(*array.Int64).Int64Values() {
			if v > 4 {
				keep = append(keep, int32(i))
			}
		}
		return keep
	})
	if err != nil {
		t.Fatal(err)
	}
	if dropped != 2 {
		t.Errorf("dropped %d rows, want 2", dropped)
	}
	if recs[1] != untouched {
		t.Error("a record with no late row was replaced")
	}
	var got []int64
	for _, r := range recs {
		got = append(got, r.Column(0).(*array.Int64).Int64Values()...)
	}
	want := []int64{5, 9, 7, 8}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rows %v, want %v", got, want)
		}
	}
	releaseRecords(recs)
}
