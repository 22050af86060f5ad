package agg

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// GoAgg is the "write it yourself" peer of "agg": a loop over the same
// Arrow records with a Go map from key to sum and count.
func GoAgg(recs []arrow.Record) (map[int64]gen.AggGroup, error) {
	out := make(map[int64]gen.AggGroup)
	for i, rec := range recs {
		k, ok1 := rec.Column(0).(*array.Int64)
		v, ok2 := rec.Column(1).(*array.Float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("agg: go peer: record %d has schema %s", i, rec.Schema())
		}
		vs := v.Float64Values()
		for j, key := range k.Int64Values() {
			g := out[key]
			g.Sum += vs[j]
			g.Count++
			out[key] = g
		}
	}
	return out, nil
}

// GoWindowed is the "write it yourself" peer of "windowed": per epoch
// record, count rows whose window is not yet closed by the watermark of
// the epochs before into a map keyed by (key, window start), then advance
// the watermark and emit and forget the windows it closed.
func GoWindowed(recs []arrow.Record) (*WinRows, error) {
	counts := make(map[[2]int64]int64)
	out := &WinRows{}
	wm := int64(0)
	for i, rec := range recs {
		k, ok1 := rec.Column(0).(*array.Int64)
		t, ok2 := rec.Column(1).(*array.Timestamp)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("agg: go peer: epoch %d has schema %s", i, rec.Schema())
		}
		ts := t.TimestampValues()
		maxTs := int64(0)
		for j, key := range k.Int64Values() {
			tv := int64(ts[j])
			maxTs = max(maxTs, tv)
			w := gen.WinBucket(tv)
			if w+gen.WinWindowUs <= wm {
				continue // late
			}
			counts[[2]int64{key, w}]++
		}
		wm = max(wm, maxTs-gen.WinDelayUs)
		for kw, n := range counts {
			if kw[1]+gen.WinWindowUs <= wm {
				out.add(gen.WinRow{Key: kw[0], Start: kw[1], N: n})
				delete(counts, kw)
			}
		}
	}
	return out, nil
}
