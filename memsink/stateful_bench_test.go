package memsink_test

import (
	"context"
	"encoding/binary"
	"math/rand"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// partitionCounts are the shuffle-partition counts the stateful-operator
// benchmarks compare: one partition is the sequential baseline, two use
// both of a 2-core machine's cores.
var partitionCounts = []int{1, 2, 4}

// partitionedSession is benchSession (no fsync) with n shuffle partitions.
func partitionedSession(b *testing.B, n int) *arrowstream.Session {
	pool := vector.NewPoolAllocator(memory.NewGoAllocator(), 0)
	b.Cleanup(pool.Close)
	s := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: pool, CheckpointRoot: b.TempDir(), NoSync: true,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: strconv.Itoa(n)},
	})
	memsink.Install(s, memsink.NewCatalog(), memsink.Options{MaxEpochs: 4})
	return s
}

var fmgwsBenchOut = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: vector.Int64, Nullable: true},
	{Name: "sum", Type: vector.Int64, Nullable: true},
}, nil)

// fmgwsBenchSum keeps a running sum of v per key (8 bytes of state) and
// emits the key's new sum: a typical light per-key function, so the
// figures show the operator's cost rather than the function's.
func fmgwsBenchSum(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
	var sum int64
	if b := s.Get(); len(b) == 8 {
		sum = int64(binary.LittleEndian.Uint64(b))
	}
	for _, v := range rows.Column(2).(*array.Int64).Int64Values() {
		sum += v
	}
	if err := s.Update(binary.LittleEndian.AppendUint64(nil, uint64(sum))); err != nil {
		return nil, err
	}
	bld := array.NewRecordBuilder(memory.DefaultAllocator, fmgwsBenchOut)
	defer bld.Release()
	bld.Field(0).(*array.Int64Builder).Append(key.(*array.Int64).Value(0))
	bld.Field(1).(*array.Int64Builder).Append(sum)
	return bld.NewRecord(), nil
}

// BenchmarkFlatMapGroupsWithState streams 64K-row epochs of 10K keys
// through groupByKey(key).flatMapGroupsWithState(running sum) in Update
// mode, at 1, 2 and 4 state partitions (partitions run in parallel), and
// reports events/s.
func BenchmarkFlatMapGroupsWithState(b *testing.B) {
	const rows, keys = 64 << 10, 10_000
	for _, n := range partitionCounts {
		b.Run("partitions="+strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			s := partitionedSession(b, n)
			src := feedEvents(b, s, rows, 5_000, func(r *rand.Rand, _ int) int64 { return r.Int63n(keys) })
			defer src.Close()
			b.ResetTimer()
			q, err := s.ReadStream("events").GroupByKey("key").
				FlatMapGroupsWithState(fmgwsBenchOut, arrowstream.Update, arrowstream.NoTimeout, fmgwsBenchSum).
				WriteStream().Format("memory").QueryName("fmgws").OutputMode(arrowstream.Update).
				Option("checkpointLocation", b.TempDir()).Start(ctx)
			runTimed(b, ctx, q, err, rows)
		})
	}
}

// BenchmarkDropDuplicates streams 64K-row epochs through
// dropDuplicates(key, eventTime) with a 10 s watermark (keys from 1e5,
// event times in ms over the epoch's 5 s, so about half of the rows are
// duplicates and state is evicted as the watermark passes), at 1, 2 and 4
// state partitions, and reports events/s.
func BenchmarkDropDuplicates(b *testing.B) {
	const rows, keys = 64 << 10, 100_000
	for _, n := range partitionCounts {
		b.Run("partitions="+strconv.Itoa(n), func(b *testing.B) {
			ctx := context.Background()
			s := partitionedSession(b, n)
			src := feedEvents(b, s, rows, 5_000, func(r *rand.Rand, _ int) int64 { return r.Int63n(keys) })
			defer src.Close()
			b.ResetTimer()
			q, err := s.ReadStream("events").
				WithColumn("eventTime", "timestamp_seconds(ts / 1000)").
				WithWatermark("eventTime", "10 seconds").
				DropDuplicates("key", "eventTime").
				WriteStream().Format("memory").QueryName("dedup").OutputMode(arrowstream.Append).
				Option("checkpointLocation", b.TempDir()).Start(ctx)
			runTimed(b, ctx, q, err, rows)
		})
	}
}
