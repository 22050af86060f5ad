package gen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The windowed-aggregation data set: a 10-second tumbling-window count per
// key with a 5-second watermark, Append mode, over epochs of (key, ts) rows
// whose times are slightly out of order. Event time advances by one window
// per epoch; a row's time is up to WinJitterUs before its place in the
// sequence, less than the delay, so no row is late and every count is exact.
const (
	WinWindowUs = 10_000_000
	WinDelayUs  = 5_000_000
	WinJitterUs = 2_000_000
	winStartUs  = 1_700_000_000_000_000
)

// WinTimestamp is the type of the ts column: microseconds, UTC.
var WinTimestamp = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

// WinSchema is the schema of the windowed data set's records.
var WinSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts", Type: WinTimestamp},
}, nil)

// WinData is one windowed data set: per epoch, the keys and times (µs).
type WinData struct {
	Keys, TS [][]int64
	// Want is the windows emitted by the end of the stream (those whose
	// end is at or before FinalWatermark), sorted by WinRowCmp.
	Want           []WinRow
	FinalWatermark int64
}

// WinRow is one emitted window count.
type WinRow struct{ Key, Start, N int64 }

// WinRowCmp orders rows by window start, key and count.
func WinRowCmp(a, b WinRow) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Key, b.Key); c != 0 {
		return c
	}
	return cmp.Compare(a.N, b.N)
}

// WinBucket is the start of the 10-second window holding ts.
func WinBucket(ts int64) int64 { return ts - ((ts%WinWindowUs)+WinWindowUs)%WinWindowUs }

// Windowed generates epochs × rows events over nKeys keys and computes the
// reference answer. The same arguments always give the same data.
// Windowed panics if an argument is not positive.
func Windowed(epochs, rows, nKeys int, seed uint64) *WinData {
	if epochs < 1 || rows < 1 || nKeys < 1 {
		panic(fmt.Sprintf("gen: Windowed(epochs=%d, rows=%d, keys=%d): all must be positive", epochs, rows, nKeys))
	}
	d := &WinData{}
	rng := splitmix64{state: seed}
	counts := map[[2]int64]int64{}
	wm := int64(0)
	for e := range epochs {
		keys, ts := make([]int64, rows), make([]int64, rows)
		maxTs := int64(0)
		for i := range keys {
			g := int64(e*rows + i)
			keys[i] = int64(rng.below(uint64(nKeys)))
			ts[i] = winStartUs + g*WinWindowUs/int64(rows) - int64(rng.below(WinJitterUs))
			maxTs = max(maxTs, ts[i])
			counts[[2]int64{keys[i], WinBucket(ts[i])}]++
		}
		wm = max(wm, maxTs-WinDelayUs)
		d.Keys, d.TS = append(d.Keys, keys), append(d.TS, ts)
	}
	d.FinalWatermark = wm
	for k, n := range counts {
		if k[1]+WinWindowUs <= wm {
			d.Want = append(d.Want, WinRow{k[0], k[1], n})
		}
	}
	slices.SortFunc(d.Want, WinRowCmp)
	return d
}

// Rows is the number of events over all epochs.
func (d *WinData) Rows() int {
	n := 0
	for _, k := range d.Keys {
		n += len(k)
	}
	return n
}

// Records returns one Arrow record per epoch, each column one bulk copy into
// mem; the caller releases them.
func (d *WinData) Records(mem memory.Allocator) []arrow.Record {
	recs := make([]arrow.Record, 0, len(d.Keys))
	for e := range d.Keys {
		n := len(d.Keys[e])
		k := bulkArray(mem, arrow.PrimitiveTypes.Int64, arrow.Int64Traits.CastToBytes(d.Keys[e]), n)
		t := bulkArray(mem, WinTimestamp, arrow.Int64Traits.CastToBytes(d.TS[e]), n)
		recs = append(recs, array.NewRecord(WinSchema, []arrow.Array{k, t}, int64(n)))
		k.Release()
		t.Release()
	}
	return recs
}

// Check compares an engine's emitted windows (any order) with Want.
func (d *WinData) Check(got []WinRow) error {
	got = slices.Clone(got)
	slices.SortFunc(got, WinRowCmp)
	if len(got) != len(d.Want) {
		return fmt.Errorf("gen: %d windows emitted, want %d", len(got), len(d.Want))
	}
	for i := range got {
		if got[i] != d.Want[i] {
			return fmt.Errorf("gen: emitted window %d: (key %d, start %d µs, count %d), want (key %d, start %d µs, count %d)",
				i, got[i].Key, got[i].Start, got[i].N, d.Want[i].Key, d.Want[i].Start, d.Want[i].N)
		}
	}
	return nil
}
