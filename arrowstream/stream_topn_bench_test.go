package arrowstream

import (
	"context"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/memsink"
)

// BenchmarkStreamingTopNEpoch measures one epoch of 2 000 events through
// a top-3 per key over 200 keys: over the stream's rows (append-only: the
// kept rows are the top 3) and over an Update-mode aggregation by (key,
// group) with 50 groups per key (retracting: every group's row is kept
// and a touched key is re-ranked whole), in the same run.
func BenchmarkStreamingTopNEpoch(b *testing.B) {
	for _, c := range []struct{ name, sql string }{
		{"appendOnly", "SELECT key, t, v, row_number() OVER (PARTITION BY key ORDER BY v DESC, t) AS rn FROM STREAM events QUALIFY rn <= 3"},
		{"overUpdateAggregation", "SELECT key, t, sum(v) AS s, row_number() OVER (PARTITION BY key ORDER BY sum(v) DESC, t) AS rn " +
			"FROM STREAM events GROUP BY key, t QUALIFY rn <= 3"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			mem := memory.NewGoAllocator()
			s := NewSession(SessionOptions{Allocator: mem, NoSync: true, Conf: map[string]string{ConfShufflePartitions: "2"}})
			cat := memsink.NewCatalog()
			memsink.Install(s, cat, memsink.Options{})
			src := NewMemoryStream(mem, eventSchema)
			defer src.Close()
			s.RegisterStream("events", src)
			res, err := s.SQL(ctx, "CREATE STREAMING TABLE top3 TBLPROPERTIES ('outputMode' = 'update', 'maxEpochs' = '4', 'checkpointLocation' = '"+b.TempDir()+"') AS "+c.sql)
			if err != nil {
				b.Fatal(err)
			}
			res.Close()
			q := s.Streams().Active()[0]
			defer q.Stop()
			rng := rand.New(rand.NewSource(1))
			rows := make([][]any, 2000)
			epoch := func() {
				for i := range rows {
					rows[i] = []any{int64(rng.Intn(200)), int64(rng.Intn(50)), int64(rng.Intn(1000) - 500)}
				}
				if _, err := src.AddData(rows...); err != nil {
					b.Fatal(err)
				}
				if err := q.ProcessAllAvailable(ctx); err != nil {
					b.Fatal(err)
				}
			}
			for range 20 { // every group exists
				epoch()
			}
			b.ResetTimer()
			for b.Loop() {
				epoch()
			}
			b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
