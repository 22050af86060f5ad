package stateful

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestRunPartitionsSerialBelowThreshold: runPartitions runs an epoch's
// partitions on the caller below its row threshold and on workers at or
// above it, and both paths give the same answer. Random epochs (0–8
// partitions of 0–3 records of 0–40 rows, some partitions failing or
// panicking) run with the threshold forced to each side and at a bound
// inside the epochs' sizes; every partition's result (the sum of its
// values, or its error) must be the same, and the serial runs must start
// no goroutine.
func TestRunPartitionsSerialBelowThreshold(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(prev)
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	r := rand.New(rand.NewPCG(28, 1))
	record := func(rows int) arrow.Record {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for range rows {
			b.Append(r.Int64N(1000) - 500)
		}
		col := b.NewArray()
		defer col.Release()
		return array.NewRecord(schema, []arrow.Array{col}, int64(rows))
	}
	type result struct {
		sum int64
		err string
	}
	run := func(byPart [][]arrow.Record, minRows int64) ([]result, uint64) {
		sums := make([]int64, len(byPart))
		before := goroutinesCreated()
		errs := runPartitionsAbove(3, byPart, minRows, func(p int) error {
			for _, rec := range byPart[p] {
				for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
					sums[p] += v
				}
			}
			switch {
			case sums[p]%7 == 1:
				return fmt.Errorf("partition %d: sum %d", p, sums[p])
			case sums[p]%7 == 2:
				panic(fmt.Sprintf("partition %d: sum %d", p, sums[p]))
			}
			return nil
		})
		started := goroutinesCreated() - before
		out := make([]result, len(byPart))
		for p := range out {
			out[p].sum = sums[p]
			if errs[p] != nil {
				// A panic's message carries its stack: keep its first line.
				msg := errs[p].Error()
				if i := slices.Index([]byte(msg), '\n'); i >= 0 {
					msg = msg[:i]
				}
				out[p].err = msg
			}
		}
		return out, started
	}
	serialSeen, parallelSeen := 0, 0
	for trial := range 300 {
		n := r.IntN(9)
		byPart := make([][]arrow.Record, n)
		total := int64(0)
		for p := range byPart {
			for range r.IntN(4) {
				rows := r.IntN(41)
				byPart[p] = append(byPart[p], record(rows))
				total += int64(rows)
			}
		}
		serial, started := run(byPart, total+1)
		if started != 0 {
			t.Fatalf("trial %d: %d goroutines started for an epoch of %d rows below the threshold", trial, started, total)
		}
		parallel, _ := run(byPart, 0)
		bound := int64(r.IntN(150))
		mixed, _ := run(byPart, bound)
		if total < bound {
			serialSeen++
		} else {
			parallelSeen++
		}
		for p := range serial {
			if serial[p] != parallel[p] || serial[p] != mixed[p] {
				t.Fatalf("trial %d partition %d: serial %+v, parallel %+v, at bound %d (%d rows) %+v", trial, p, serial[p], parallel[p], bound, total, mixed[p])
			}
		}
		for _, part := range byPart {
			releaseRecords(part)
		}
	}
	if serialSeen == 0 || parallelSeen == 0 {
		t.Fatalf("the bounds did not fall on both sides of the epochs: %d serial, %d parallel", serialSeen, parallelSeen)
	}
	// The parallel path does hand partitions to workers (the count above
	// would see them): two active partitions at a zero threshold.
	two := [][]arrow.Record{{record(5)}, {record(5)}}
	defer releaseRecords(two[0])
	defer releaseRecords(two[1])
	if _, started := run(two, 0); started == 0 {
		t.Fatal("no goroutine started for two active partitions above the threshold")
	}
	if _, started := run(two, parallelMinRows); started != 0 {
		t.Fatalf("%d goroutines started for 10 rows at the default threshold %d", started, parallelMinRows)
	}
}
