package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
)

var (
	reduceAucSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us},
		{Name: "exp", Type: arrow.FixedWidthTypes.Timestamp_us},
		{Name: "cat", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	reduceBidSchema = arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "q", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us},
	}, nil)
)

// TestJoinReducedForMaxMatchesPlain: an inner stream-stream join read only
// by a max or min aggregation grouped by one side's columns (Nexmark q4)
// emits of each row of that side only the pair the aggregation keeps
// (stateful_join_reduce.go). Its answer must equal the plain plan's, the
// same query with the aggregate's argument an expression (price + 0),
// which the reduction does not take: random auctions and bids over 16
// epochs at 4 partitions, late rows of both sides, null and tied values,
// bids of no auction, the query stopped and restarted from its checkpoint
// twice, with and without the range condition (the join's deferred
// residual and its plain output), max and min; a sum and keys of both
// sides, which must not be reduced; the min of an int32 column, whose
// state failed to load at a restart before the live aggregation framed a
// lone 32-bit value as the store does. Every Arrow buffer is released.
func TestJoinReducedForMaxMatchesPlain(t *testing.T) {
	const rng = " AND B.ts BETWEEN A.ts AND A.exp"
	for _, c := range []struct{ name, agg, plain, cond, keys string }{
		{"max/range", "max(B.price)", "max(B.price + 0)", rng, ""},
		{"max/equi", "max(B.price)", "max(B.price + 0)", "", ""},
		{"min/range", "min(B.price)", "min(B.price + 0)", rng, ""},
		{"minq/range", "min(B.q)", "min(B.q + 0)", rng, ""},
		// Not reduced: a sum, and keys of both sides.
		{"sum/range", "sum(B.price)", "sum(B.price + 0)", rng, ""},
		{"bothsides/range", "max(B.price)", "max(B.price + 0)", rng, ", B.q"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := int64(1); seed <= 3; seed++ {
				sql := `SELECT A.id, A.cat, A.exp` + c.keys + `, %s AS m
FROM STREAM auc WATERMARK exp DELAY OF INTERVAL 2 SECONDS AS A
JOIN STREAM bid WATERMARK ts DELAY OF INTERVAL 2 SECONDS AS B
  ON A.id = B.a` + c.cond + `
GROUP BY A.id, A.cat, A.exp` + c.keys
				got := runReduceScenario(t, fmt.Sprintf(sql, c.agg), seed)
				want := runReduceScenario(t, fmt.Sprintf(sql, c.plain), seed)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: the reduced join's answer (%d rows) differs from the plain plan's (%d rows)\n got %v\nwant %v", seed, len(got), len(want), got, want)
				}
				if len(want) < 50 {
					t.Fatalf("seed %d: the answer has %d rows: the test checks little", seed, len(want))
				}
			}
		})
	}
}

// runReduceScenario runs query over seed's events and returns its output
// rows, sorted.
func runReduceScenario(t *testing.T, query string, seed int64) []string {
	t.Helper()
	ctx := context.Background()
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: checked, Conf: map[string]string{ConfShufflePartitions: "4"}})
	auc, bid := NewMemoryStream(checked, reduceAucSchema), NewMemoryStream(checked, reduceBidSchema)
	defer auc.Close()
	defer bid.Close()
	s.RegisterStream("auc", auc)
	s.RegisterStream("bid", bid)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	start := func() *StreamingQuery {
		t.Helper()
		q, err := s.SQLDataFrame(query).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatalf("start %s: %v", query, err)
		}
		return q
	}
	q := start()
	defer func() { q.Stop() }()

	rng := rand.New(rand.NewSource(seed))
	const sec = int64(1_000_000)
	now, nextID := int64(100), int64(0)
	add := func(src *MemoryStream, rec arrow.Record) {
		t.Helper()
		_, err := src.AddRecord(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	for epoch := 0; epoch < 17; epoch++ {
		ab := array.NewRecordBuilder(checked, reduceAucSchema)
		bb := array.NewRecordBuilder(checked, reduceBidSchema)
		if epoch == 16 { // far ahead: every group closes
			now += 1000
		}
		for n := 0; n < 12; n++ {
			ts := now - int64(rng.Intn(3))
			if rng.Intn(10) == 0 {
				ts -= 8 // late
			}
			ab.Field(0).(*array.Int64Builder).Append(nextID)
			ab.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ts * sec))
			ab.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp((ts + 1 + int64(rng.Intn(6))) * sec))
			ab.Field(3).(*array.Int64Builder).Append(int64(rng.Intn(4)))
			nextID++
		}
		for n := 0; n < 60; n++ {
			ts := now - int64(rng.Intn(4))
			if rng.Intn(10) == 0 {
				ts -= 8 // late
			}
			a := nextID - 1 - int64(rng.Intn(40))
			if rng.Intn(15) == 0 {
				bb.Field(0).AppendNull()
			} else {
				bb.Field(0).(*array.Int64Builder).Append(a)
			}
			if rng.Intn(6) == 0 {
				bb.Field(1).AppendNull()
			} else {
				bb.Field(1).(*array.Int64Builder).Append(int64(rng.Intn(20)) - 5)
			}
			if rng.Intn(6) == 0 {
				bb.Field(2).AppendNull()
			} else {
				bb.Field(2).(*array.Int32Builder).Append(int32(rng.Intn(20)) - 5)
			}
			bb.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(ts * sec))
		}
		add(auc, ab.NewRecord())
		add(bid, bb.NewRecord())
		ab.Release()
		bb.Release()
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		now += 1 + int64(rng.Intn(2))
		if epoch == 5 || epoch == 11 {
			if err := q.Stop(); err != nil {
				t.Fatal(err)
			}
			q = start()
		}
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range sink.All() {
		rows = append(rows, fmt.Sprint(r))
	}
	slices.Sort(rows)
	return rows
}
