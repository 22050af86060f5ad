package vector_test

import (
	"context"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var ivSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64, Nullable: true},
	{Name: "m", Type: vector.YearMonthInterval, Nullable: true},
	{Name: "us", Type: vector.Interval, Nullable: true},
}, nil)

var ivCalls = []vector.AggregateCall{
	call(vector.AggTrySum, "try_sum_m", "m"), call(vector.AggTryAvg, "try_avg_m", "m"),
	call(vector.AggTrySum, "try_sum_us", "us"), call(vector.AggTryAvg, "try_avg_us", "us"),
}

// ivModel (prefix) is try_sum/try_avg of column col (1: months, 2: micros) of group
// k over rows in order, by big integers: NULL once a running sum leaves
// the type's range (Spark checks every addition), the average rounded half
// up; without prefix, only the total is checked against the range.
func ivModel(rows []vt.Row, k int64, col int, avg, prefix bool) (any, bool) {
	lo, hi := big.NewInt(math.MinInt32), big.NewInt(math.MaxInt32)
	if col == 2 {
		lo, hi = big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	}
	sum, n := new(big.Int), int64(0)
	for _, r := range rows {
		if r[0] != k || r[col] == nil {
			continue
		}
		n++
		switch v := r[col].(type) {
		case arrow.MonthInterval:
			sum.Add(sum, big.NewInt(int64(v)))
		case arrow.Duration:
			sum.Add(sum, big.NewInt(int64(v)))
		}
		if prefix && (sum.Cmp(lo) < 0 || sum.Cmp(hi) > 0) {
			return nil, true
		}
	}
	if sum.Cmp(lo) < 0 || sum.Cmp(hi) > 0 {
		return nil, true
	}
	if n == 0 {
		return nil, false
	}
	if avg {
		q, r := new(big.Int).QuoRem(sum, big.NewInt(n), new(big.Int))
		if new(big.Int).Lsh(new(big.Int).Abs(r), 1).Cmp(big.NewInt(n)) >= 0 {
			q.Add(q, big.NewInt(int64(sum.Sign())))
		}
		sum = q
	}
	if col == 1 {
		return arrow.MonthInterval(sum.Int64()), false
	}
	return arrow.Duration(sum.Int64()), false
}

func checkIntervalSums(t *testing.T, rows []vt.Row, batch int) {
	t.Helper()
	spec := vector.AggregateSpec{GroupBy: byK(), Aggregates: ivCalls}
	for _, mode := range []string{"complete", "merge"} {
		mem := vt.NewAllocator(t)
		in := vt.BuildRecords(mem, ivSchema, rows, vt.Shape{BatchSize: batch})
		scan, err := vector.NewScan(ivSchema, in...)
		releaseRecords(in)
		if err != nil {
			t.Fatal(err)
		}
		var op vector.Operator
		if mode == "complete" {
			op, err = vector.NewHashAggregate(mem, scan, spec)
		} else {
			op, err = mergeBuild(spec)(mem, []vector.Operator{scan})
		}
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(context.Background(), op)
		op.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
			k, ok := r[0].(int64)
			if !ok {
				continue
			}
			for i, c := range []struct {
				col int
				avg bool
			}{{1, false}, {1, true}, {2, false}, {2, true}} {
				want, _ := ivModel(rows, k, c.col, c.avg, mode == "complete")
				got := r[1+i]
				// Merged partial sums add in another order, so that a
				// partial sum may overflow where the row-order sums do
				// not, and the other way round: a non-NULL result must be
				// the exact one.
				if mode == "merge" && got == nil {
					continue
				}
				if got != want {
					t.Errorf("%s k=%d %s: got %v (%T), want %v", mode, k, ivCalls[i].Name, got, got, want)
				}
			}
		}
		releaseRecords(recs)
		mem.AssertSize(t, 0)
	}
}

// TestIntervalTrySumAvgModel: try_sum/try_avg of year-month and day-time
// intervals against the big-integer model, near the types' limits.
func TestIntervalTrySumAvgModel(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	months := []int64{0, 1, -1, 7, math.MaxInt32, math.MinInt32, math.MaxInt32 / 2, -5}
	micros := []int64{0, 1, -3, math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, 86_400_000_000}
	for iter := 0; iter < 60; iter++ {
		var rows []vt.Row
		for i := rng.Intn(40); i > 0; i-- {
			var m, us any
			if rng.Intn(5) > 0 {
				m = arrow.MonthInterval(months[rng.Intn(len(months))])
			}
			if rng.Intn(5) > 0 {
				us = arrow.Duration(micros[rng.Intn(len(micros))])
			}
			rows = append(rows, vt.Row{int64(rng.Intn(3)), m, us})
		}
		checkIntervalSums(t, rows, 1+rng.Intn(6))
	}
}

// FuzzIntervalTrySumAvg decodes rows from the fuzzer's bytes and checks
// try_sum/try_avg of intervals against the model, without leaks.
func FuzzIntervalTrySumAvg(f *testing.F) {
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0x80, 2, 1, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, batch uint8) {
		var rows []vt.Row
		for len(data) >= 13 && len(rows) < 100 {
			var m, us any
			if data[0]&4 == 0 {
				m = arrow.MonthInterval(int32(uint32(data[1]) | uint32(data[2])<<8 | uint32(data[3])<<16 | uint32(data[4])<<24))
			}
			if data[0]&8 == 0 {
				var v uint64
				for i := 0; i < 8; i++ {
					v |= uint64(data[5+i]) << (8 * i)
				}
				us = arrow.Duration(int64(v))
			}
			rows = append(rows, vt.Row{int64(data[0] % 3), m, us})
			data = data[13:]
		}
		checkIntervalSums(t, rows, 1+int(batch%8))
	})
}
