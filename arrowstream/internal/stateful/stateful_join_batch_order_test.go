package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// joinOrderRecord is a record of an int64 key k and an eviction time t of
// n rows: times from few distinct values (ties) or many, some null.
func joinOrderRecord(mem memory.Allocator, rng *rand.Rand, n int, distinct int64) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "t", Type: vector.Timestamp, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for j := 0; j < n; j++ {
		b.Field(0).(*array.Int64Builder).Append(int64(j))
		if rng.Intn(11) == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(rng.Int63n(distinct)))
		}
	}
	return b.NewRecord()
}

// joinOrderSide is a side evicted by the value of column t.
func joinOrderSide(t testing.TB, mem memory.Allocator, schema *arrow.Schema) *statefulJoin {
	t.Helper()
	codec, err := newValueCodec(mem, schema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	side := &joinSide{name: "auctions", schema: schema, codec: codec, keys: []vector.Expr{vector.Col("k")},
		evict: evictValue, evictCol: 1, timeCol: -1}
	side.keyCol = keyColumnOf(side, true)
	return &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false}, sides: [2]*joinSide{side, side}}
}

// TestJoinBatchRowsByEvictionTime: a batch of stored rows is laid out by
// eviction time, rows without one last, and rows of one time in the order
// they came (the stable order), so that eviction cuts a prefix: the
// batch's times and the input rows it holds (through its selection when
// it is a view of the input, else its own record's key column, k being
// the input row) are those of a stable sort of the rows kept (the
// oracle), for times with many ties and with few, selections and views.
func TestJoinBatchRowsByEvictionTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for seed := int64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			n := 1 + rng.Intn(1500)
			distinct := []int64{1, 3, 40, 1 << 40}[seed%4]
			rec := joinOrderRecord(mem, rng, n, distinct)
			defer rec.Release()
			s := joinOrderSide(t, mem, rec.Schema())
			defer s.Close()
			r := &sideRows{rec: rec}
			if rng.Intn(3) > 0 {
				for j := 0; j < n; j++ {
					if rng.Intn(3) > 0 {
						r.sel = append(r.sel, int32(j))
					}
				}
				if len(r.sel) == 0 {
					r.sel = []int32{int32(n - 1)}
				}
			}
			var held atomic.Int64
			if rng.Intn(2) == 0 {
				r.in = newJoinInput(rec, &held)
			}
			m := r.count()
			r.keyNull = make([]bool, m)
			words := make([]uint64, m)
			for j := range words {
				words[j] = uint64(selRow(r.sel, j))
			}
			var rows []int32
			for j := 0; j < m; j++ {
				if rng.Intn(4) > 0 {
					rows = append(rows, int32(j))
				}
			}
			if len(rows) == 0 {
				rows = []int32{0}
			}

			// The oracle: the rows kept, stably sorted by their time.
			tcol := rec.Column(1).(*array.Timestamp)
			timeOf := func(j int32) int64 {
				in := selRow(r.sel, int(j))
				if tcol.IsNull(in) {
					return noEvictTime
				}
				return int64(tcol.Value(in))
			}
			want := slices.Clone(rows)
			slices.SortStableFunc(want, func(a, b int32) int {
				x, y := timeOf(a), timeOf(b)
				switch {
				case x < y:
					return -1
				case x > y:
					return 1
				}
				return 0
			})

			b, err := buildJoinBatch(s, 0, 1, r, slices.Clone(rows), words, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.release()
			if len(b.times) != len(want) {
				t.Fatalf("%d times for %d rows", len(b.times), len(want))
			}
			for k, j := range want {
				in := selRow(r.sel, int(j))
				var got int
				switch {
				case b.in != nil:
					got = selRow(b.sel, k)
				default:
					got = int(b.rec.Column(0).(*array.Int64).Value(k))
				}
				if got != in || b.times[k] != timeOf(j) {
					t.Fatalf("row %d of the batch: input row %d at %d, want row %d at %d", k, got, b.times[k], in, timeOf(j))
				}
			}
		})
	}
}

// BenchmarkJoinBatchByTime builds the stored batch of an epoch's new
// auctions in Nexmark q4 (300 rows of a partition, each with its own
// expires, in no order of it):
//
//	go test -run '^$' -bench JoinBatchByTime -benchmem ./arrowstream/internal/stateful/
func BenchmarkJoinBatchByTime(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	rec := joinOrderRecord(mem, rng, 300, 1<<40)
	defer rec.Release()
	s := joinOrderSide(b, mem, rec.Schema())
	defer s.Close()
	r := &sideRows{rec: rec, keyNull: make([]bool, 300)}
	words := make([]uint64, 300)
	rows := make([]int32, 300)
	for j := range rows {
		rows[j], words[j] = int32(j), uint64(j)
	}
	b.ReportAllocs()
	for b.Loop() {
		jb, err := buildJoinBatch(s, 0, 1, r, rows, words, nil)
		if err != nil {
			b.Fatal(err)
		}
		jb.release()
	}
}
