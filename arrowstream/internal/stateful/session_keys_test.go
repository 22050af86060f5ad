package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestSessionKeysReuse: a merge's key numbering kept in its scratch and
// reset between epochs numbers every epoch's rows as a fresh numbering
// does (fixed-width keys with nulls, string keys, epochs of 1 to 3,000
// rows, one past maxKeptSessionRefs keys so that its maps are dropped),
// and, once warm, numbering an epoch of fixed-width keys it has room for
// allocates nothing (fresh maps were grown from empty every epoch).
func TestSessionKeysReuse(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String} {
		t.Run(typ.String(), func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: typ, Nullable: true}}, nil)
			codec, err := newRowCodec(mem, schema, []int{0})
			if err != nil {
				t.Fatal(err)
			}
			defer codec.enc.Release()
			rng := rand.New(rand.NewSource(3))
			var sc sessionScratch
			number := func(k *sessionKeys, rows int) ([]int32, []int) {
				var added []int
				ids := k.number(codec, rows, nil, func(i int) { added = append(added, i) })
				return ids, added
			}
			sizes := []int{1, 50, 3000, 7, maxKeptSessionRefs + 1, 200, 0, 900}
			for epoch, n := range sizes {
				rec := sessionKeysRecord(mem, schema, rng, n, max(1, n/3))
				if err := codec.encode(rec); err != nil {
					t.Fatal(err)
				}
				fresh := &sessionKeys{}
				fresh.reset()
				wantIDs, wantAdded := number(fresh, n)
				gotIDs, gotAdded := number(sc.sessionKeys(), n)
				if !slices.Equal(gotIDs, wantIDs) || !slices.Equal(gotAdded, wantAdded) || sc.keys.n != fresh.n {
					t.Fatalf("epoch %d (%d rows): reused numbering %v (new %v, %d keys), fresh %v (new %v, %d keys)",
						epoch, n, gotIDs, gotAdded, sc.keys.n, wantIDs, wantAdded, fresh.n)
				}
				rec.Release()
			}
			if typ.ID() != arrow.INT64 {
				return // a new string key is a string of its own
			}
			rec := sessionKeysRecord(mem, schema, rng, 500, 200)
			defer rec.Release()
			if err := codec.encode(rec); err != nil {
				t.Fatal(err)
			}
			ids := make([]int32, 0, 500)
			sc.sessionKeys().number(codec, 500, ids, func(int) {})
			allocs := testing.AllocsPerRun(20, func() {
				sc.sessionKeys().number(codec, 500, ids, func(int) {})
			})
			if allocs != 0 {
				t.Fatalf("numbering 500 rows of 200 keys in a warm scratch allocated %.0f times, want 0", allocs)
			}
		})
	}
}

// sessionKeysRecord is n rows of about keys distinct keys of schema's
// one column, a tenth of them null.
func sessionKeysRecord(mem memory.Allocator, schema *arrow.Schema, rng *rand.Rand, n, keys int) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := 0; i < n; i++ {
		k := rng.Intn(keys)
		switch f := b.Field(0).(type) {
		case *array.Int64Builder:
			if rng.Intn(10) == 0 {
				f.AppendNull()
				continue
			}
			f.Append(int64(k))
		case *array.StringBuilder:
			if rng.Intn(10) == 0 {
				f.AppendNull()
				continue
			}
			f.Append(fmt.Sprint("key", k))
		}
	}
	return b.NewRecord()
}
