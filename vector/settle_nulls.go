package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// SettleNullCounts computes the null count of every column of rec, and of
// their children and dictionaries, where it is not known yet (a slice of
// an array with nulls starts with an unknown count).
//
// Arrow computes an unknown null count lazily and stores it in the array's
// shared data on first use. Data that several goroutines read at once (a
// memory-sink table served to concurrent Flight readers, a join's kept
// batch read by the background snapshot and the next epoch) must have its
// counts settled before it is shared: two first uses at once are a data
// race. Settled, every reader only reads.
func SettleNullCounts(rec arrow.Record) {
	for _, c := range rec.Columns() {
		settleDataNulls(c.Data())
	}
}

func settleDataNulls(ad arrow.ArrayData) {
	d, ok := ad.(*array.Data)
	if !ok || d == nil {
		return
	}
	if d.NullN() < 0 {
		n := 0
		switch bufs := d.Buffers(); {
		case d.DataType().ID() == arrow.NULL:
			n = d.Len()
		case len(bufs) > 0 && bufs[0] != nil && d.Len() > 0:
			n = d.Len() - bitutil.CountSetBits(bufs[0].Bytes(), d.Offset(), d.Len())
		}
		d.SetNullN(n)
	}
	for _, ch := range d.Children() {
		settleDataNulls(ch)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		settleDataNulls(d.Dictionary())
	}
}
