package vector_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestKeyIndexMatchesMap numbers random batches of keys of every table
// layout (one fixed-width column, a tuple of fixed-width columns, keys
// with strings), with repeats and nulls, and checks each number against a
// brute-force map: equal keys share a number, new keys take the next
// numbers, in order of first appearance; after a Reset numbering starts
// afresh.
func TestKeyIndexMatchesMap(t *testing.T) {
	layouts := []struct {
		name   string
		schema *arrow.Schema
		row    func(rng *rand.Rand) vt.Row
	}{
		{"fixed", arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.Int64, Nullable: true}}, nil),
			func(rng *rand.Rand) vt.Row { return vt.Row{nullOr(rng, int64(rng.IntN(3000))-5)} }},
		{"int32", arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.Int32, Nullable: true}}, nil),
			func(rng *rand.Rand) vt.Row { return vt.Row{nullOr(rng, int32(rng.IntN(3000)))} }},
		{"words", arrow.NewSchema([]arrow.Field{
			{Name: "a", Type: vector.Int64, Nullable: true}, {Name: "d", Type: vector.Timestamp, Nullable: true}}, nil),
			func(rng *rand.Rand) vt.Row {
				return vt.Row{nullOr(rng, int64(rng.IntN(1000))), nullOr(rng, arrow.Timestamp(rng.IntN(3)*86_400_000_000))}
			}},
		{"bytes", arrow.NewSchema([]arrow.Field{
			{Name: "s", Type: vector.String, Nullable: true}, {Name: "i", Type: vector.Int32, Nullable: true}}, nil),
			func(rng *rand.Rand) vt.Row {
				return vt.Row{nullOr(rng, fmt.Sprintf("k%d", rng.IntN(700))), nullOr(rng, int32(rng.IntN(4)))}
			}},
	}
	for _, l := range layouts {
		for _, shape := range vt.Shapes {
			t.Run(l.name+"/"+shape.String(), func(t *testing.T) {
				mem := vt.NewAllocator(t)
				rng := rand.New(rand.NewPCG(7, uint64(shape.BatchSize)))
				types := make([]arrow.DataType, len(l.schema.Fields()))
				for i, f := range l.schema.Fields() {
					types[i] = f.Type
				}
				x, err := vector.NewKeyIndex(mem, types)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Release()
				model := map[string]int32{}
				for batch := range 20 {
					if rng.IntN(4) == 0 { // numbering afresh
						if err := x.Reset(); err != nil {
							t.Fatal(err)
						}
						clear(model)
					}
					rows := make([]vt.Row, rng.IntN(400))
					for i := range rows {
						rows[i] = l.row(rng)
					}
					for _, rec := range vt.BuildRecords(mem, l.schema, rows, shape) {
						ids := make([]int32, rec.NumRows())
						err := x.Index(t.Context(), rec.Columns(), ids)
						got := vt.RowsOf(rec)
						rec.Release()
						if err != nil {
							t.Fatal(err)
						}
						for i, row := range got {
							key := fmt.Sprint(row...)
							want, ok := model[key]
							if !ok {
								want = int32(len(model))
								model[key] = want
							}
							if ids[i] != want {
								t.Fatalf("batch %d row %d (key %s): number %d, want %d", batch, i, key, ids[i], want)
							}
						}
						if x.Len() != len(model) {
							t.Fatalf("batch %d: Len %d, want %d", batch, x.Len(), len(model))
						}
					}
				}
			})
		}
	}
}

func TestKeyIndexRejects(t *testing.T) {
	mem := vt.NewAllocator(t)
	if _, err := vector.NewKeyIndex(mem, nil); err == nil {
		t.Error("NewKeyIndex without key columns: no error")
	}
	x, err := vector.NewKeyIndex(mem, []arrow.DataType{vector.Int64})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	rec := vt.BuildRecord(mem, arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.Int64}}, nil), []vt.Row{{int64(1)}, {int64(2)}})
	defer rec.Release()
	if err := x.Index(t.Context(), rec.Columns(), make([]int32, 3)); err == nil {
		t.Error("Index with 3 ids for 2 rows: no error")
	}
	if err := x.Index(t.Context(), []arrow.Array{rec.Column(0), rec.Column(0)}, make([]int32, 2)); err == nil {
		t.Error("Index with 2 key columns for 1: no error")
	}
}

func nullOr(rng *rand.Rand, v any) any {
	if rng.IntN(40) == 0 {
		return nil
	}
	return v
}

// TestKeyIndexResetShrinks: a Reset after a batch of many keys keeps the
// numbering right and lets go of a table far larger than the next
// batches need.
func TestKeyIndexResetShrinks(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.Int64, Nullable: true}}, nil)
	x, err := vector.NewKeyIndex(mem, []arrow.DataType{vector.Int64})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	index := func(rows []vt.Row) []int32 {
		rec := vt.BuildRecord(mem, schema, rows)
		defer rec.Release()
		ids := make([]int32, len(rows))
		if err := x.Index(t.Context(), rec.Columns(), ids); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	big := make([]vt.Row, 50_000)
	for i := range big {
		big[i] = vt.Row{int64(i)}
	}
	index(big)
	large := x.HeapBytes()
	for range 2 {
		if err := x.Reset(); err != nil {
			t.Fatal(err)
		}
		ids := index([]vt.Row{{int64(7)}, {nil}, {int64(49_999)}, {int64(7)}, {nil}})
		if fmt.Sprint(ids) != "[0 1 2 0 1]" || x.Len() != 3 {
			t.Fatalf("after Reset: ids %v, Len %d", ids, x.Len())
		}
	}
	if small := x.HeapBytes(); small*8 > large {
		t.Fatalf("table of %d bytes after Reset, %d before", small, large)
	}
}
