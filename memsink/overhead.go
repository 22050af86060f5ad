package memsink

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The Go memory a table's bookkeeping takes besides the Arrow buffers'
// bytes, estimated per object from the sizes of Arrow's and our structs
// (rounded up to Go's allocation size classes). Small epochs are dominated
// by it: a 20-row, 2-column epoch holds ~400 bytes of buffers and ~2 KB of
// structs. Size.Overhead reports it and MaxBytes counts it, so that the
// byte limit bounds what the table really holds;
// BenchmarkSmallEpochs checks the estimate against the heap.
const (
	// segment struct, its record slice and the pointer in each version.
	segOverhead = 144
	// a record: its struct and column slice, plus the column slice entry.
	recOverhead = 80
	// an array and its ArrayData (structs, buffer slice).
	arrayOverhead = 288
	// a memory.Buffer struct plus the allocator's 64-byte alignment
	// padding of the allocation behind it.
	bufferOverhead = 80 + 64
	// an epoch in a run: id offset and row end (uint32 each), commit time.
	runEpochOverhead = 16
)

// segmentOverhead estimates the bookkeeping of a segment over recs with
// runEpochs epochs listed in a run (0 for a single epoch).
func segmentOverhead(recs []arrow.Record, runEpochs int) int64 {
	n := int64(segOverhead) + runEpochOverhead*int64(runEpochs)
	for _, r := range recs {
		n += recordOverhead(r)
	}
	return n
}

// recordOverhead estimates the structs of one record.
func recordOverhead(r arrow.Record) int64 {
	n := int64(recOverhead)
	for _, c := range r.Columns() {
		n += dataOverhead(c.Data())
	}
	return n
}

func dataOverhead(d arrow.ArrayData) int64 {
	n := int64(arrayOverhead)
	for _, b := range d.Buffers() {
		if b != nil {
			n += bufferOverhead
		}
	}
	for _, c := range d.Children() {
		n += dataOverhead(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += dataOverhead(dict)
	}
	return n
}
