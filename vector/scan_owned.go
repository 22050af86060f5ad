package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
)

// NewOwnedScan returns a Scan that takes ownership of records (which must
// all have schema): it hands each one on without retaining it and releases
// what was not read on Close. It is the operator for records already
// drained from another operator (a replayed epoch, a shared source read,
// a snapshot).
func NewOwnedScan(schema *arrow.Schema, records []arrow.Record) *Scan {
	return &Scan{schema: schema, records: records}
}

// ReleaseRecords releases every non-nil record of recs (the caller owns
// one reference to each).
func ReleaseRecords(recs []arrow.Record) {
	for _, r := range recs {
		if r != nil {
			r.Release()
		}
	}
}
