package gen

import (
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// DefaultBatchRows is the batch size AggRecords uses when given none: 64K
// rows, the size at which Arrow batches were fastest to build and stream on
// the project's machines (docs/performance.md, "Machine and library
// facts").
const DefaultBatchRows = 64 << 10

// AggSchema is the schema of the hash-aggregation data set: a grouping key k
// and a value v, neither nullable.
var AggSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64},
}, nil)

// AggData returns rows rows of the hash-aggregation data set, as the key
// and value columns.
//
// The keys take exactly nKeys distinct values, each appearing rows/nKeys or
// rows/nKeys+1 times (so every key is present when rows >= nKeys), in a
// shuffled order. The key values are distinct pseudo-random int64s derived
// from seed (see the package comment for why not 0..nKeys-1). The values are
// uniform in [0, 1000) with two decimals, independent of the key, and never
// negative so that sums cannot cancel and a relative tolerance is meaningful.
//
// The same arguments always give the same data. AggData panics if rows < 0
// or nKeys < 1.
func AggData(rows int, nKeys int, seed uint64) (keys []int64, vals []float64) {
	if rows < 0 || nKeys < 1 {
		panic(fmt.Sprintf("gen: AggData(rows=%d, keys=%d): need rows >= 0 and keys >= 1", rows, nKeys))
	}
	// XOR with a constant keeps mix64 a bijection of the key index, so the
	// nKeys key values are distinct for any seed.
	salt := mix64(seed ^ 0x6a09e667f3bcc908)
	keys = make([]int64, rows)
	n := uint64(nKeys)
	var idx uint64
	for r := range keys {
		keys[r] = int64(mix64(idx ^ salt))
		if idx++; idx == n {
			idx = 0
		}
	}
	rng := splitmix64{state: seed}
	// Fisher-Yates: a uniformly random order of the balanced multiset above.
	for i := len(keys) - 1; i > 0; i-- {
		j := rng.below(uint64(i) + 1)
		keys[i], keys[j] = keys[j], keys[i]
	}
	vals = make([]float64, rows)
	for r := range vals {
		vals[r] = float64(rng.below(100_000)) / 100
	}
	return keys, vals
}

// AggRecords returns the key and value columns as Arrow records of schema
// AggSchema with batchRows rows each (the last may be shorter); batchRows <=
// 0 means DefaultBatchRows. Each column of each batch is one bulk copy into a
// buffer from mem, not built value by value. The records are owned by the
// caller, who releases them. AggRecords panics if the columns differ in
// length.
func AggRecords(mem memory.Allocator, keys []int64, vals []float64, batchRows int) []arrow.Record {
	if len(keys) != len(vals) {
		panic(fmt.Sprintf("gen: AggRecords: %d keys but %d values", len(keys), len(vals)))
	}
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	recs := make([]arrow.Record, 0, (len(keys)+batchRows-1)/batchRows)
	for lo := 0; lo < len(keys); lo += batchRows {
		hi := min(lo+batchRows, len(keys))
		k := bulkArray(mem, arrow.PrimitiveTypes.Int64, arrow.Int64Traits.CastToBytes(keys[lo:hi]), hi-lo)
		v := bulkArray(mem, arrow.PrimitiveTypes.Float64, arrow.Float64Traits.CastToBytes(vals[lo:hi]), hi-lo)
		recs = append(recs, array.NewRecord(AggSchema, []arrow.Array{k, v}, int64(hi-lo)))
		k.Release()
		v.Release()
	}
	return recs
}

// bulkArray copies the raw little-endian values of a fixed-width column
// without nulls into one buffer from mem and wraps it as an array of type dt.
func bulkArray(mem memory.Allocator, dt arrow.DataType, raw []byte, n int) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(raw))
	copy(buf.Bytes(), raw)
	data := array.NewData(dt, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	arr := array.MakeFromData(data)
	// The data retains the buffer and the array retains the data; drop the
	// references taken here so that releasing the array frees the buffer.
	data.Release()
	buf.Release()
	return arr
}

// AggGroup is one group of the hash-aggregation answer: SUM(v) and COUNT(*).
type AggGroup struct {
	Sum   float64
	Count int64
}

// AggReference computes SUM(v), COUNT(*) GROUP BY k with a Go map, in row
// order. It is the answer every engine's result is compared with; it is
// deliberately simple rather than fast.
func AggReference(keys []int64, vals []float64) map[int64]AggGroup {
	if len(keys) != len(vals) {
		panic(fmt.Sprintf("gen: AggReference: %d keys but %d values", len(keys), len(vals)))
	}
	ref := make(map[int64]AggGroup)
	for i, k := range keys {
		g := ref[k]
		g.Sum += vals[i]
		g.Count++
		ref[k] = g
	}
	return ref
}

// AggGroups turns an engine's result columns (key, sum, count; one row per
// group) into the map form of AggReference. A key that appears twice is an
// error: a GROUP BY must return each group once.
func AggGroups(keys []int64, sums []float64, counts []int64) (map[int64]AggGroup, error) {
	if len(keys) != len(sums) || len(keys) != len(counts) {
		return nil, fmt.Errorf("gen: result columns differ in length: %d keys, %d sums, %d counts", len(keys), len(sums), len(counts))
	}
	got := make(map[int64]AggGroup, len(keys))
	for i, k := range keys {
		if _, dup := got[k]; dup {
			return nil, fmt.Errorf("gen: key %d appears more than once in the result", k)
		}
		got[k] = AggGroup{Sum: sums[i], Count: counts[i]}
	}
	return got, nil
}

// CheckAgg compares a result with the reference: the same key set, equal
// counts, and sums within relTol of each other relative to the larger
// magnitude (floating-point sums in a different order differ in the last
// bits). It returns nil when they agree, or an error that counts the
// differences and shows the first few, in key order.
func CheckAgg(want, got map[int64]AggGroup, relTol float64) error {
	var diffs []int64
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.Count != w.Count || !closeEnough(w.Sum, g.Sum, relTol) {
			diffs = append(diffs, k)
		}
	}
	var extra []int64
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(diffs) == 0 && len(extra) == 0 {
		return nil
	}
	slices.Sort(diffs)
	slices.Sort(extra)
	msg := fmt.Sprintf("gen: aggregate result differs from the reference: %d of %d groups wrong or missing, %d unexpected groups (%d groups returned)",
		len(diffs), len(want), len(extra), len(got))
	for _, k := range diffs[:min(len(diffs), 5)] {
		w := want[k]
		if g, ok := got[k]; ok {
			msg += fmt.Sprintf("; key %d: got sum=%v count=%d, want sum=%v count=%d", k, g.Sum, g.Count, w.Sum, w.Count)
		} else {
			msg += fmt.Sprintf("; key %d: missing, want sum=%v count=%d", k, w.Sum, w.Count)
		}
	}
	for _, k := range extra[:min(len(extra), 5)] {
		msg += fmt.Sprintf("; key %d: unexpected", k)
	}
	return fmt.Errorf("%s", msg)
}

func closeEnough(a, b, relTol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b))
}
