package nexmark

import (
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// peer is the "write it yourself" implementation of a query: plain Go maps
// and loops over the same Arrow batches the engine reads, fed epoch by
// epoch. Strings it keeps point into the batches' buffers (no copies), so
// the batches must outlive answer.
type peer interface {
	// epoch processes one epoch's events.
	epoch(b *Batch)
	// answer returns the final answer as sorted canonical rows (see
	// rows.go): what the engine's memory sink must hold once every epoch,
	// and the no-data epochs the final watermark causes, has run.
	answer() []string
}

// Column positions in the schemas of schema.go.
const (
	pID, pName, pEmail, pCreditCard, pCity, pState, pTime, pExtra                                    = 0, 1, 2, 3, 4, 5, 6, 7
	aID, aItemName, aDescription, aInitialBid, aReserve, aTime, aExpires, aSeller, aCategory, aExtra = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
	bAuction, bBidder, bPrice, bChannel, bURL, bTime, bExtra                                         = 0, 1, 2, 3, 4, 5, 6
)

func ints(rec arrow.Record, c int) []int64 { return rec.Column(c).(*array.Int64).Int64Values() }

func times(rec arrow.Record, c int) []arrow.Timestamp {
	return rec.Column(c).(*array.Timestamp).TimestampValues()
}

func strs(rec arrow.Record, c int) *array.String { return rec.Column(c).(*array.String) }

// maxTime is the largest timestamp of a column (or the previous maximum).
func maxTime(prev int64, ts []arrow.Timestamp) int64 {
	for _, t := range ts {
		prev = max(prev, int64(t))
	}
	return prev
}

const (
	second    = int64(1_000_000) // µs
	noTime    = int64(-1 << 62)
	tenSecond = 10 * second
)

func sorted(rows []string) []string {
	slices.Sort(rows)
	return rows
}
