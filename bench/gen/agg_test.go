package gen_test

import (
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// fingerprint hashes the generated columns so that a change to the
// generator, which would silently change every benchmark's data, fails a test.
func fingerprint(keys []int64, vals []float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range keys {
		for _, x := range [2]uint64{uint64(keys[i]), math.Float64bits(vals[i])} {
			for s := range 8 {
				b[s] = byte(x >> (8 * s))
			}
			h.Write(b[:])
		}
	}
	return h.Sum64()
}

// pinnedFingerprint is fingerprint(AggData(1000, 10, 42)).
const pinnedFingerprint = 0x4b29993198a37e1a

func TestAggDataDeterministic(t *testing.T) {
	k1, v1 := gen.AggData(10_000, 100, 7)
	k2, v2 := gen.AggData(10_000, 100, 7)
	if !slices.Equal(k1, k2) || !slices.Equal(v1, v2) {
		t.Fatal("same arguments gave different data")
	}
	k3, v3 := gen.AggData(10_000, 100, 8)
	if slices.Equal(k1, k3) || slices.Equal(v1, v3) {
		t.Fatal("different seeds gave the same data")
	}
	// Pinned so that the benchmark data cannot change unnoticed between
	// machines, Go versions or edits of the generator.
	k, v := gen.AggData(1000, 10, 42)
	if got, want := fingerprint(k, v), uint64(pinnedFingerprint); got != want {
		t.Fatalf("AggData(1000, 10, 42) fingerprint = %#x, want %#x: the generated data changed", got, want)
	}
}

func TestAggDataKeyCoverage(t *testing.T) {
	for _, tc := range []struct{ rows, keys int }{
		{0, 1}, {1, 1}, {5, 1}, {10, 10}, {1000, 7}, {1000, 999}, {1000, 1000}, {100_000, 1000}, {3, 10},
	} {
		keys, vals := gen.AggData(tc.rows, tc.keys, 1)
		if len(keys) != tc.rows || len(vals) != tc.rows {
			t.Fatalf("AggData(%d, %d): got %d keys and %d values", tc.rows, tc.keys, len(keys), len(vals))
		}
		counts := map[int64]int{}
		for _, k := range keys {
			counts[k]++
		}
		wantDistinct := min(tc.rows, tc.keys)
		if len(counts) != wantDistinct {
			t.Errorf("AggData(%d, %d): %d distinct keys, want %d", tc.rows, tc.keys, len(counts), wantDistinct)
		}
		lo, hi := tc.rows/tc.keys, (tc.rows+tc.keys-1)/tc.keys
		for k, c := range counts {
			if c < lo || c > hi {
				t.Errorf("AggData(%d, %d): key %d appears %d times, want between %d and %d", tc.rows, tc.keys, k, c, lo, hi)
				break
			}
		}
		for i, v := range vals {
			if v < 0 || v >= 1000 || math.Abs(v*100-math.Round(v*100)) > 1e-6 {
				t.Errorf("AggData(%d, %d): value %d = %v, want a two-decimal number in [0, 1000)", tc.rows, tc.keys, i, v)
				break
			}
		}
	}
}

func TestAggDataShuffled(t *testing.T) {
	keys, _ := gen.AggData(10_000, 100, 3)
	if slices.IsSorted(keys) {
		t.Fatal("keys are sorted")
	}
	// The generator lays the keys out cyclically before shuffling; if the
	// shuffle did nothing, each window of 100 rows would hold 100 distinct keys.
	seen := map[int64]bool{}
	for _, k := range keys[:100] {
		seen[k] = true
	}
	if len(seen) == 100 {
		t.Fatal("the first 100 rows hold all 100 keys: the rows look unshuffled")
	}
	// The key values are spread over int64, not a dense 0..n-1 range.
	lo, hi := slices.Min(keys), slices.Max(keys)
	if uint64(hi-lo) < 1<<40 {
		t.Fatalf("keys span only [%d, %d]", lo, hi)
	}
}

func TestAggDataPanicsOnBadArguments(t *testing.T) {
	for _, tc := range []struct{ rows, keys int }{{-1, 1}, {10, 0}, {10, -5}} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "AggData") {
					t.Errorf("AggData(%d, %d): recovered %v, want a panic naming AggData", tc.rows, tc.keys, r)
				}
			}()
			gen.AggData(tc.rows, tc.keys, 1)
		}()
	}
}

func TestAggRecords(t *testing.T) {
	keys, vals := gen.AggData(1000, 10, 9)
	for _, batch := range []int{1, 3, 64, 999, 1000, 4096, 0} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		recs := gen.AggRecords(mem, keys, vals, batch)
		size := batch
		if size <= 0 {
			size = gen.DefaultBatchRows
		}
		if want := (len(keys) + size - 1) / size; len(recs) != want {
			t.Fatalf("batch %d: %d records, want %d", batch, len(recs), want)
		}
		var gotK []int64
		var gotV []float64
		for i, r := range recs {
			if !r.Schema().Equal(gen.AggSchema) {
				t.Fatalf("batch %d: record %d has schema %s", batch, i, r.Schema())
			}
			if i < len(recs)-1 && r.NumRows() != int64(size) {
				t.Fatalf("batch %d: record %d has %d rows, want %d", batch, i, r.NumRows(), size)
			}
			if r.Column(0).NullN() != 0 || r.Column(1).NullN() != 0 {
				t.Fatalf("batch %d: record %d has nulls", batch, i)
			}
			gotK = append(gotK, r.Column(0).(*array.Int64).Int64Values()...)
			gotV = append(gotV, r.Column(1).(*array.Float64).Float64Values()...)
			r.Release()
		}
		if !slices.Equal(gotK, keys) || !slices.Equal(gotV, vals) {
			t.Fatalf("batch %d: records do not hold the generated columns", batch)
		}
		mem.AssertSize(t, 0)
	}
	if recs := gen.AggRecords(memory.DefaultAllocator, nil, nil, 0); len(recs) != 0 {
		t.Fatalf("no rows gave %d records", len(recs))
	}
}

func TestAggReferenceAndCheck(t *testing.T) {
	keys := []int64{5, -3, 5, 9, 5, -3}
	vals := []float64{1.5, 2, 2.5, 0, 1, 0.25}
	ref := gen.AggReference(keys, vals)
	want := map[int64]gen.AggGroup{5: {Sum: 5, Count: 3}, -3: {Sum: 2.25, Count: 2}, 9: {Sum: 0, Count: 1}}
	if err := gen.CheckAgg(want, ref, 0); err != nil {
		t.Fatalf("reference: %v", err)
	}

	got, err := gen.AggGroups([]int64{9, 5, -3}, []float64{0, 5 * (1 + 1e-12), 2.25}, []int64{1, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.CheckAgg(ref, got, 1e-9); err != nil {
		t.Fatalf("a sum within tolerance was rejected: %v", err)
	}

	for name, tc := range map[string]struct {
		keys   []int64
		sums   []float64
		counts []int64
		want   string
	}{
		"wrong count": {[]int64{9, 5, -3}, []float64{0, 5, 2.25}, []int64{1, 4, 2}, "key 5: got sum=5 count=4, want sum=5 count=3"},
		"wrong sum":   {[]int64{9, 5, -3}, []float64{0, 5.001, 2.25}, []int64{1, 3, 2}, "1 of 3 groups wrong"},
		"missing key": {[]int64{9, 5}, []float64{0, 5}, []int64{1, 3}, "key -3: missing"},
		"extra key":   {[]int64{9, 5, -3, 7}, []float64{0, 5, 2.25, 1}, []int64{1, 3, 2, 1}, "key 7: unexpected"},
		"zero vs not": {[]int64{9, 5, -3}, []float64{1e-300, 5, 2.25}, []int64{1, 3, 2}, "key 9"},
	} {
		got, err := gen.AggGroups(tc.keys, tc.sums, tc.counts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err = gen.CheckAgg(ref, got, 1e-9)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckAgg = %v, want an error containing %q", name, err, tc.want)
		}
	}

	if _, err := gen.AggGroups([]int64{1, 1}, []float64{1, 2}, []int64{1, 1}); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("duplicate key: err = %v", err)
	}
	if _, err := gen.AggGroups([]int64{1}, []float64{1, 2}, []int64{1}); err == nil {
		t.Error("ragged columns: no error")
	}
}
