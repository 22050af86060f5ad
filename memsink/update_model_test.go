package memsink_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// viewModelCase is a key layout of the view's index: one fixed-width
// column, a tuple of fixed-width columns (q17's auction and day) and
// keys with strings (normalized key bytes), all with null keys.
type viewModelCase struct {
	name   string
	schema *arrow.Schema
	keys   []string
	row    func(rng *rand.Rand, domain int, val int64) vt.Row
}

var viewModelCases = []viewModelCase{
	{
		name: "fixed",
		schema: arrow.NewSchema([]arrow.Field{
			{Name: "k", Type: vector.Int64, Nullable: true},
			{Name: "v", Type: vector.Int64},
		}, nil),
		keys: []string{"k"},
		row: func(rng *rand.Rand, domain int, val int64) vt.Row {
			return r(maybeNull(rng, int64(rng.IntN(domain))-3), val)
		},
	},
	{
		name: "words",
		schema: arrow.NewSchema([]arrow.Field{
			{Name: "auction", Type: vector.Int64, Nullable: true},
			{Name: "day", Type: vector.Timestamp, Nullable: true},
			{Name: "v", Type: vector.Int64},
		}, nil),
		keys: []string{"auction", "day"},
		row: func(rng *rand.Rand, domain int, val int64) vt.Row {
			day := arrow.Timestamp(int64(rng.IntN(3)) * 86_400_000_000)
			return r(maybeNull(rng, int64(rng.IntN(domain/3+1))), maybeNull(rng, day), val)
		},
	},
	{
		name:   "bytes",
		schema: grouped,
		keys:   []string{"g", "h"},
		row: func(rng *rand.Rand, domain int, val int64) vt.Row {
			return r(maybeNull(rng, fmt.Sprintf("k%d", rng.IntN(domain/4+1))), maybeNull(rng, int32(rng.IntN(4))), val)
		},
	},
}

// maybeNull returns v, or nil one time in 50.
func maybeNull[T any](rng *rand.Rand, v T) any {
	if rng.IntN(50) == 0 {
		return nil
	}
	return v
}

// TestViewUpsertModel drives views through random epochs of upserts —
// keys repeated within an epoch and across epochs, records of random
// sizes, epochs large enough to fill chunks and small enough to pile up
// and be compacted, and now and then a Clear (the view's only deletion) —
// and checks after every epoch that the view holds exactly the last row
// of every key of a brute-force map, that a snapshot taken earlier still
// reads what it read then, and (the checked allocator) that nothing leaks.
func TestViewUpsertModel(t *testing.T) {
	epochs := 60
	if testing.Short() {
		epochs = 20
	}
	for _, c := range viewModelCases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(19, uint64(len(c.name))))
			mem := vt.NewAllocator(t)
			info := arrowstream.SinkInfo{QueryName: "view", Schema: c.schema, Mode: arrowstream.Update, KeyColumns: c.keys}
			tbl := newTable(t, mem, info, memsink.Options{UpdateAsView: true})
			nk := len(c.keys)
			model := map[string]vt.Row{}
			var held *memsink.Snapshot
			var heldRows []vt.Row
			defer func() {
				if held != nil {
					held.Release()
				}
			}()
			for e := range epochs {
				if e > 0 && rng.IntN(40) == 0 {
					if err := tbl.Clear(); err != nil {
						t.Fatal(err)
					}
					clear(model)
				}
				// Mostly small epochs over a domain that keeps growing, so
				// that updates land in many older chunks; now and then one
				// larger than a chunk.
				n := rng.IntN(200)
				if rng.IntN(20) == 0 {
					n = memsink.MaxRecordRows + rng.IntN(1000)
				}
				domain := 50 + 40*e
				rows := make([]vt.Row, n)
				for i := range rows {
					rows[i] = c.row(rng, domain, int64(e)<<32|int64(i))
					model[fmt.Sprint(rows[i][:nk]...)] = rows[i]
				}
				shape := vt.Shapes[rng.IntN(len(vt.Shapes))]
				if shape.BatchSize < 64 && n > 1000 {
					shape.BatchSize = 4096 // keep the test quick
				}
				if err := tbl.AddBatch(t.Context(), int64(e), op(t, mem, c.schema, rows, shape)); err != nil {
					t.Fatalf("epoch %d: %v", e, err)
				}
				want := make([]vt.Row, 0, len(model))
				for _, row := range model {
					want = append(want, row)
				}
				checkRows(t, fmt.Sprintf("view after epoch %d", e), want, rowsOf(tbl.Snapshot()))
				if sz := tbl.Size(); sz.Rows-sz.DeadRows != int64(len(model)) {
					t.Fatalf("epoch %d: size %+v, want %d live rows", e, sz, len(model))
				}
				if e == epochs/3 {
					held, heldRows = tbl.Snapshot(), want
				}
			}
			checkRows(t, "snapshot held since epoch "+fmt.Sprint(epochs/3), heldRows, vt.RowsOf(held.Records()...))
		})
	}
}
