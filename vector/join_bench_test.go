package vector_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

const (
	ysbProbeRows = 10_000_000
	ysbBatchRows = 64 << 10
	ysbAds       = 1000 // 100 campaigns of 10 ads, as in the Yahoo benchmark
)

// ysbInputs builds the probe side (ad_id, event_time) in 64K-row batches and
// the build side (ad_id, campaign_id).
// With sparse, ad ids are spread over the int64 range (as hashed UUIDs
// would be), so that the join must hash them.
func ysbInputs(mem memory.Allocator, sparse bool) (probe []arrow.Record, build arrow.Record) {
	ps := arrow.NewSchema([]arrow.Field{{Name: "ad_id", Type: vector.Int64}, {Name: "event_time", Type: vector.Timestamp}}, nil)
	x := uint64(0x9e3779b97f4a7c15)
	for start := 0; start < ysbProbeRows; start += ysbBatchRows {
		n := min(ysbBatchRows, ysbProbeRows-start)
		ad := array.NewInt64Builder(mem)
		ts := array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
		ad.Reserve(n)
		ts.Reserve(n)
		for i := 0; i < n; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			ad.UnsafeAppend(adID(int64(x%ysbAds), sparse))
			ts.UnsafeAppend(arrow.Timestamp(1_700_000_000_000_000 + int64(start+i)*10))
		}
		a, t := ad.NewArray(), ts.NewArray()
		probe = append(probe, array.NewRecord(ps, []arrow.Array{a, t}, int64(n)))
		a.Release()
		t.Release()
		ad.Release()
		ts.Release()
	}
	bs := arrow.NewSchema([]arrow.Field{{Name: "ad_id", Type: vector.Int64}, {Name: "campaign_id", Type: vector.Int64}}, nil)
	ad, camp := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	for i := 0; i < ysbAds; i++ {
		// Shuffled, so that the build order says nothing about the key.
		id := int64(i*7919) % ysbAds
		ad.Append(adID(id, sparse))
		camp.Append(id / 10)
	}
	a, c := ad.NewArray(), camp.NewArray()
	build = array.NewRecord(bs, []arrow.Array{a, c}, ysbAds)
	a.Release()
	c.Release()
	ad.Release()
	camp.Release()
	return probe, build
}

func adID(i int64, sparse bool) int64 {
	if sparse {
		return i * -0x61c8864680b583eb
	}
	return i
}

// BenchmarkJoinYSB joins 10M ad_id events (64K-row batches) with 1000 ads
// (ad_id → campaign_id), as the Yahoo streaming benchmark does, and in the
// same run the same lookup written by hand over the same buffers: a dense
// slice indexed by ad_id, and a Go map. rows/s is the hash join's;
// dense-rows/s and map-rows/s the baselines'; join/dense and join/map their
// ratios. Every variant produces the campaign_id of every event; the join
// produces Arrow records (the left columns shared, the right gathered).
func BenchmarkJoinYSB(b *testing.B) {
	b.Run("dense-ids", func(b *testing.B) { benchmarkYSB(b, false) })
	b.Run("sparse-ids", func(b *testing.B) { benchmarkYSB(b, true) })
}

func benchmarkYSB(b *testing.B, sparse bool) {
	mem := memory.NewGoAllocator()
	probe, build := ysbInputs(mem, sparse)
	defer func() {
		for _, r := range probe {
			r.Release()
		}
		build.Release()
	}()
	ctx := context.Background()
	var joinT, denseT, mapT time.Duration
	var sink int64
	campaigns := make([]int64, ysbBatchRows)
	for b.Loop() {
		// The hash join, from scans to released output records.
		start := time.Now()
		left, _ := vector.NewScan(probe[0].Schema(), probe...)
		right, _ := vector.NewScan(build.Schema(), build)
		j, err := vector.NewHashJoin(mem, left, right, vector.JoinSpec{
			Type: vector.InnerJoin, LeftKeys: cols("ad_id"), RightKeys: cols("ad_id"),
		})
		if err != nil {
			b.Fatal(err)
		}
		rows := 0
		for {
			rec, err := j.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows += int(rec.NumRows())
			sink += rec.Column(3).(*array.Int64).Value(0)
			rec.Release()
		}
		j.Close()
		joinT += time.Since(start)
		if rows != ysbProbeRows {
			b.Fatalf("join produced %d rows", rows)
		}

		ids := build.Column(0).(*array.Int64).Int64Values()
		camps := build.Column(1).(*array.Int64).Int64Values()
		if !sparse {
			// Dense slice: ad_id indexes the build row directly.
			start = time.Now()
			sink += denseJoin(probe, ids, camps, campaigns)
			denseT += time.Since(start)
		}
		start = time.Now()
		sink += mapJoin(probe, ids, camps, campaigns)
		mapT += time.Since(start)
	}
	if sink == 42 {
		b.Log(sink)
	}
	total := float64(ysbProbeRows) * float64(b.N)
	b.ReportMetric(total/joinT.Seconds(), "rows/s")
	if !sparse {
		b.ReportMetric(total/denseT.Seconds(), "dense-rows/s")
		b.ReportMetric(denseT.Seconds()/joinT.Seconds(), "join/dense")
	}
	b.ReportMetric(total/mapT.Seconds(), "map-rows/s")
	b.ReportMetric(mapT.Seconds()/joinT.Seconds(), "join/map")
}

// denseJoin is the hand-written baseline: campaign ids looked up through a
// slice indexed by ad id, written to a reused buffer.
func denseJoin(probe []arrow.Record, ids, camps, out []int64) int64 {
	dense := make([]int32, ysbAds)
	for i := range dense {
		dense[i] = -1
	}
	for r, id := range ids {
		dense[id] = int32(r)
	}
	var sink int64
	for _, rec := range probe {
		ads := rec.Column(0).(*array.Int64).Int64Values()
		out := out[:len(ads)]
		for i, ad := range ads {
			if uint64(ad) < ysbAds {
				if r := dense[ad]; r >= 0 {
					out[i] = camps[r]
				}
			}
		}
		sink += out[0]
	}
	return sink
}

// mapJoin is the baseline with a Go map from ad id to campaign id.
func mapJoin(probe []arrow.Record, ids, camps, out []int64) int64 {
	m := make(map[int64]int64, len(ids))
	for r, id := range ids {
		m[id] = camps[r]
	}
	var sink int64
	for _, rec := range probe {
		ads := rec.Column(0).(*array.Int64).Int64Values()
		out := out[:len(ads)]
		for i, ad := range ads {
			if c, ok := m[ad]; ok {
				out[i] = c
			}
		}
		sink += out[0]
	}
	return sink
}
