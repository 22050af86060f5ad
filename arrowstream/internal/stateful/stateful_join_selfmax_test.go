package stateful

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestJoinSelfMaxFilterMatchesModel: joinSelfMax.filter keeps, in order,
// exactly the rows whose value is the largest of their window's (start
// and end both compared) among the record's rows with a value, and drops
// rows with a null value or window; against a model over random records:
// windows in runs and interleaved, 1 to 60 distinct windows (past the
// linear search's 16: the map), windows sharing a start or an end, nulls,
// ties, and one scratch reused by records of growing and shrinking sizes.
func TestJoinSelfMaxFilterMatchesModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	winType := arrow.StructOf(
		arrow.Field{Name: "start", Type: vector.Timestamp, Nullable: true},
		arrow.Field{Name: "end", Type: vector.Timestamp, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "w", Type: winType, Nullable: true},
	}, nil)
	p := &joinSelfMax{b: plan.JoinSelfMax{ValueCol: 1, WindowCol: 2}}
	for trial := 0; trial < 300; trial++ {
		n := rng.Intn(400)
		wins := 1 + rng.Intn(60)
		runs := rng.Intn(2) == 0
		b := array.NewRecordBuilder(mem, schema)
		type row struct {
			n, s, e     int64
			nNull, wNul bool
		}
		rows := make([]row, n)
		w := rng.Intn(wins)
		for i := range rows {
			if !runs || rng.Intn(20) == 0 {
				w = rng.Intn(wins)
			}
			// Window w is (w/2, w%2·1000 + w/4): distinct, pairs share a
			// start, others an end.
			r := row{n: int64(rng.Intn(6)), s: int64(w / 2), e: int64(w%2*1000 + w/4), nNull: rng.Intn(15) == 0, wNul: rng.Intn(25) == 0}
			rows[i] = r
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if r.nNull {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Int64Builder).Append(r.n)
			}
			sb := b.Field(2).(*array.StructBuilder)
			if r.wNul {
				sb.AppendNull()
				continue
			}
			sb.Append(true)
			sb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(r.s))
			sb.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.e))
		}
		rec := b.NewRecord()
		b.Release()
		// The model.
		best := map[[2]int64]int64{}
		for _, r := range rows {
			if r.nNull || r.wNul {
				continue
			}
			k := [2]int64{r.s, r.e}
			if m, ok := best[k]; !ok || r.n > m {
				best[k] = r.n
			}
		}
		var want []int64
		for i, r := range rows {
			if !r.nNull && !r.wNul && r.n == best[[2]int64{r.s, r.e}] {
				want = append(want, int64(i))
			}
		}
		if n < 2 { // one row or none: passed as it is
			want = nil
			for i := range rows {
				want = append(want, int64(i))
			}
		}
		out, err := p.filter(mem, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		got := out.Column(0).(*array.Int64).Int64Values()
		if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("trial %d (%d rows, %d windows, runs %v): kept %v, want %v", trial, n, wins, runs, got, want)
		}
		if n >= 2 && p.dropped != int64(n-len(want)) {
			t.Fatalf("trial %d: dropped %d, want %d", trial, p.dropped, n-len(want))
		}
		out.Release()
	}
}
