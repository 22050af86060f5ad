package stateful

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var mergeBenchSchema = arrow.NewSchema([]arrow.Field{{Name: "extra", Type: arrow.BinaryTypes.String}}, nil)

// countingAllocator counts the bytes allocated through it (the merges'
// copies).
type countingAllocator struct {
	memory.Allocator
	bytes int64
}

func (c *countingAllocator) Allocate(n int) []byte {
	c.bytes += int64(n)
	return c.Allocator.Allocate(n)
}

func (c *countingAllocator) Reallocate(n int, b []byte) []byte {
	c.bytes += int64(max(n-len(b), 0))
	return c.Allocator.Reallocate(n, b)
}

// BenchmarkJoinSideMergeRun feeds a side that never evicts (q20's bids)
// epochs of 1,000 rows of 200-byte strings, merging its tail after each
// as the operator does, and reports the CPU and the bytes the merges copy
// per row added: with full batches both stay flat from a short run to one
// eight times as long (without them the long run copies each row once
// more).
//
//	go test -run '^$' -bench JoinSideMergeRun -benchmem ./arrowstream/internal/stateful/
func BenchmarkJoinSideMergeRun(b *testing.B) {
	const rows, width = 1_000, 200
	mem := memory.NewGoAllocator()
	bld := array.NewStringBuilder(mem)
	val := string(make([]byte, width))
	for range rows {
		bld.Append(val)
	}
	col := bld.NewArray()
	bld.Release()
	rec := array.NewRecord(mergeBenchSchema, []arrow.Array{col}, rows)
	col.Release()
	defer rec.Release()
	keys := make([]uint64, rows)
	for i := range keys {
		keys[i] = uint64(i)
	}
	for _, epochs := range []int{64, 512} {
		b.Run(fmt.Sprintf("epochs=%d", epochs), func(b *testing.B) {
			var added int64
			count := &countingAllocator{Allocator: mem}
			for b.Loop() {
				side := newJoinSideLive[uint64]()
				for e := range epochs {
					rec.Retain()
					nb := &joinBatch[uint64]{id: uint64(e) << 8, rec: rec, end: rows, keys: keys, keyNull: make([]bool, rows)}
					if err := side.add(nb); err != nil {
						b.Fatal(err)
					}
					nb.rewrite = true
					side.mark(nb)
					side.changed()
					if _, err := side.mergeTail(count); err != nil {
						b.Fatal(err)
					}
				}
				added += int64(epochs) * rows
				side.release()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(added), "ns/row")
			b.ReportMetric(float64(count.bytes)/float64(added), "copied-B/row")
		})
	}
}

// BenchmarkJoinMergeViews merges 8 batches that are views of their
// epochs' records (a level-0 tail, as q4's and q20's sides merge every
// 8 epochs): 4,600 rows each of an int64 and a 24-byte string, every
// second row of a record. The merge gathers by (record, row) lists built
// per row.
//
//	go test -run '^$' -bench JoinMergeViews -benchmem ./arrowstream/internal/stateful/
func BenchmarkJoinMergeViews(b *testing.B) {
	const rows, views = 4_600, mergeFanIn
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	tail := make([]*joinBatch[uint64], views)
	recs := make([]arrow.Record, views)
	for i := range tail {
		vb, sb := array.NewInt64Builder(mem), array.NewStringBuilder(mem)
		for r := range 2 * rows {
			vb.Append(int64(r))
			sb.Append("abcdefghijklmnopqrstuvwx")
		}
		v, s := vb.NewArray(), sb.NewArray()
		vb.Release()
		sb.Release()
		recs[i] = array.NewRecord(schema, []arrow.Array{v, s}, 2*rows)
		v.Release()
		s.Release()
		sel := make([]int32, rows)
		for r := range sel {
			sel[r] = int32(2 * r)
		}
		tail[i] = &joinBatch[uint64]{rec: recs[i], sel: sel, end: rows}
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for b.Loop() {
		rec, err := mergeRecords(mem, tail, recs)
		if err != nil {
			b.Fatal(err)
		}
		rec.Release()
	}
}
