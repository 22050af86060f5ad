package memsink_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkStreamStreamJoinStateSize measures one epoch of the
// stream-stream inner join (1K new rows per side, keys matching about one
// stored row each) over a state of growing size (16K, 64K and 256K rows
// per side, no watermark, so nothing is evicted). ns/op is the time of one
// epoch; an epoch whose cost follows its input stays flat as the state
// grows.
func BenchmarkStreamStreamJoinStateSize(b *testing.B) {
	const perEpoch = 1 << 10
	for _, stateRows := range []int{16 << 10, 64 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("state=%dK", stateRows>>10), func(b *testing.B) {
			ctx := context.Background()
			s := partitionedSession(b, 2)
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "key", Type: vector.Int64, Nullable: true},
				{Name: "v", Type: vector.Int64, Nullable: true},
			}, nil)
			var srcs [2]*arrowstream.MemoryStream
			for i, name := range []string{"lefts", "rights"} {
				srcs[i] = arrowstream.NewMemoryStream(s.Allocator(), schema)
				defer srcs[i].Close()
				s.RegisterStream(name, srcs[i])
			}
			add := func(side int, keys []int64) {
				kb, vb := array.NewInt64Builder(s.Allocator()), array.NewInt64Builder(s.Allocator())
				defer kb.Release()
				defer vb.Release()
				kb.AppendValues(keys, nil)
				for i := range keys {
					vb.Append(int64(i))
				}
				k, v := kb.NewArray(), vb.NewArray()
				rec := array.NewRecord(schema, []arrow.Array{k, v}, int64(len(keys)))
				k.Release()
				v.Release()
				if _, err := srcs[side].AddRecord(rec); err != nil {
					b.Fatal(err)
				}
				rec.Release()
			}
			q, err := s.SQLDataFrame(`SELECT l.key, l.v AS lv, r.v AS rv FROM STREAM lefts AS l JOIN STREAM rights AS r ON l.key = r.key`).
				WriteStream().Format("memory").QueryName("joined").OutputMode(arrowstream.Append).
				Option("checkpointLocation", b.TempDir()).Start(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer q.Stop()
			// The state: even keys on the left, odd keys on the right (no
			// matches between them).
			for side := 0; side < 2; side++ {
				keys := make([]int64, stateRows)
				for i := range keys {
					keys[i] = int64(2*i + side)
				}
				add(side, keys)
			}
			if err := q.ProcessAllAvailable(ctx); err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewSource(1))
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				for side := 0; side < 2; side++ {
					keys := make([]int64, perEpoch)
					for i := range keys {
						// A key stored on the other side: one match each.
						keys[i] = int64(2*r.Intn(stateRows) + 1 - side)
					}
					add(side, keys)
				}
				if err := q.ProcessAllAvailable(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if p := q.LastProgress(); p != nil && len(p.StateOperators) > 0 {
				b.ReportMetric(float64(p.StateOperators[0].NumRowsTotal), "stateRows")
			}
		})
	}
}
