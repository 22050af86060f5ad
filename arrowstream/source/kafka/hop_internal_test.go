package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
)

var hopTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// hopRecord makes rows v = from..from+n-1 with key k<v%keys> and event
// time v seconds.
func hopRecord(mem memory.Allocator, from, n, keys int) arrow.Record {
	b := array.NewRecordBuilder(mem, hopTestSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("k%d", i%keys))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1e6))
	}
	return b.NewRecord()
}

// failingOp returns its records, then an error.
type failingOp struct {
	vector.Operator
	err error
}

func (f *failingOp) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := f.Operator.Next(ctx)
	if errors.Is(err, io.EOF) {
		return nil, f.err
	}
	return rec, err
}

// readHop reads the committed rows of the hop topic: per partition the
// values and keys, and the markers.
// readHop reads the committed records of topic until it holds at least
// wantRows rows and wantMarkers markers (a generous deadline bounds the
// wait: a loaded machine fetches slowly), then half a second more, so
// that a record sent twice is read too.
func readHop(t *testing.T, c *kfake.Cluster, mem memory.Allocator, topic string, wantRows, wantMarkers int) (rows map[int32][]int64, keys map[string]map[int32]bool, markers int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rows, keys = map[int32][]int64{}, map[string]map[int32]bool{}
	msg, err := hopSchemaMessage(mem, hopTestSchema)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := newHopDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(2*time.Minute))
	defer cancel()
	n := 0
	grace := false
	for {
		if !grace && n >= wantRows && markers >= wantMarkers {
			grace = true
			var stop context.CancelFunc
			ctx, stop = context.WithTimeout(ctx, testutil.Scaled(500*time.Millisecond))
			defer stop()
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return rows, keys, markers
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch string(r.Key) {
			case "w":
				if _, _, err := decodeHopMarker(r.Value); err != nil {
					t.Fatal(err)
				}
				markers++
			case "d":
				recs, err := decodeHopBatch(mem, dec, hopTestSchema, msg, r.Value)
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range recs {
					ks, vs := rec.Column(0).(*array.String), rec.Column(1).(*array.Int64)
					for i := 0; i < int(rec.NumRows()); i++ {
						rows[r.Partition] = append(rows[r.Partition], vs.Value(i))
						n++
						if keys[ks.Value(i)] == nil {
							keys[ks.Value(i)] = map[int32]bool{}
						}
						keys[ks.Value(i)][r.Partition] = true
					}
					rec.Release()
				}
			default:
				t.Fatalf("record with key %q in the hop topic", r.Key)
			}
		})
	}
}

// TestHopSinkExactlyOnce: the hop sink writes an epoch once, whatever is
// replayed: a second AddBatch of a committed epoch, from the same sink or
// from a new one over the same checkpoint (a restart), writes nothing; an
// epoch that fails midway is aborted (read-committed readers never see
// it) and written once when retried. Rows are hashed on the key: every
// key is in one partition, Spark's pmod(hash(k), 4).
func TestHopSinkExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("Kafka transactions (-short)")
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cl, err := NewCluster(ClusterOptions{Name: "c1", Brokers: c.ListenAddrs(), SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := stream.HopSpec{Table: "t", Schema: hopTestSchema, KeyColumns: []int{0}, Partitions: 4, EventTimeColumn: 2, CheckpointDir: dir}
	ctx := context.Background()
	add := func(sink stream.Sink, epoch int64, from, n int, fail error) error {
		rec := hopRecord(mem, from, n, 10)
		defer rec.Release()
		var op vector.Operator
		op, err := vector.NewScan(hopTestSchema, rec)
		if err != nil {
			t.Fatal(err)
		}
		if fail != nil {
			op = &failingOp{Operator: op, err: fail}
		}
		return sink.AddBatch(ctx, epoch, op)
	}
	s1, err := cl.HopSink(mem, spec)
	if err != nil {
		t.Fatal(err)
	}
	// What follows is stream.EpochIdempotentSink's contract (a later
	// AddBatch of a committed epoch, in this run or after a restart, is
	// ignored); the sink declares it, so that the engine writes an
	// upstream epoch's commit record with the next epoch's offsets.
	if ei, ok := s1.(stream.EpochIdempotentSink); !ok || !ei.EpochIdempotent() {
		t.Fatalf("the hop sink (%T) does not declare itself epoch-idempotent", s1)
	}
	if err := add(s1, 0, 0, 100, nil); err != nil {
		t.Fatal(err)
	}
	if err := add(s1, 0, 0, 100, nil); err != nil { // replay in the same run
		t.Fatal(err)
	}
	s1.(stream.ClosingSink).CloseSink()

	s2, err := cl.HopSink(mem, spec) // a restart over the same checkpoint
	if err != nil {
		t.Fatal(err)
	}
	defer s2.(stream.ClosingSink).CloseSink()
	if err := add(s2, 0, 0, 100, nil); err != nil {
		t.Fatal(err)
	}
	if err := add(s2, 1, 100, 100, nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("injected failure while reading the epoch")
	if err := add(s2, 2, 200, 100, boom); !errors.Is(err, boom) {
		t.Fatalf("failed epoch: err %v, want the injected failure", err)
	}
	if err := add(s2, 2, 200, 100, nil); err != nil {
		t.Fatal(err)
	}

	rows, keys, markers := readHop(t, c, mem, HopTopic("c1", "t", 0), 300, 3*4)
	seen := map[int64]int{}
	for _, vs := range rows {
		for _, v := range vs {
			seen[v]++
		}
	}
	for v := int64(0); v < 300; v++ {
		if seen[v] != 1 {
			t.Fatalf("value %d crossed the hop %d times, want once (%d distinct values)", v, seen[v], len(seen))
		}
	}
	if len(seen) != 300 {
		t.Fatalf("%d distinct values crossed the hop, want 300", len(seen))
	}
	if markers != 3*4 {
		t.Fatalf("%d watermark markers, want one per committed epoch and partition (12)", markers)
	}
	for k, ps := range keys {
		if len(ps) != 1 {
			t.Fatalf("key %s is in partitions %v, want one", k, ps)
		}
		key := array.NewStringBuilder(mem)
		key.Append(k)
		arr := key.NewArray()
		h := make([]int32, 1)
		if err := vector.HashRows([]arrow.Array{arr}, h); err != nil {
			t.Fatal(err)
		}
		arr.Release()
		key.Release()
		want := ((h[0] % 4) + 4) % 4
		for p := range ps {
			if p != want {
				t.Fatalf("key %s in partition %d, want pmod(hash, 4) = %d", k, p, want)
			}
		}
	}
}

// TestHopSpecRefusals: bad hop specs are refused with errors that name
// the problem.
func TestHopSpecRefusals(t *testing.T) {
	listSchema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	cases := []struct {
		spec stream.HopSpec
		want string
	}{
		{stream.HopSpec{Table: "t", Partitions: 4, CheckpointDir: "d"}, "without a schema"},
		{stream.HopSpec{Table: "t", Schema: hopTestSchema, Partitions: 0, CheckpointDir: "d"}, "0 partitions"},
		{stream.HopSpec{Table: "t", Schema: hopTestSchema, Partitions: 4}, "checkpoint directory"},
		{stream.HopSpec{Table: "t", Schema: hopTestSchema, Partitions: 4, CheckpointDir: "d", KeyColumns: []int{3}}, "out of range"},
		{stream.HopSpec{Table: "t", Schema: listSchema, Partitions: 4, CheckpointDir: "d", KeyColumns: []int{0}}, "cannot be hashed"},
	}
	for _, c := range cases {
		err := checkHopSpec(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("spec %+v: err %v, want %q", c.spec, err, c.want)
		}
	}
}

// TestHopCodecRoundTrip: a batch encodes and decodes to the same rows,
// and markers keep their event time and writer.
func TestHopCodecRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a, b := hopRecord(mem, 0, 50, 7), hopRecord(mem, 50, 30, 7)
	defer a.Release()
	defer b.Release()
	enc, err := newHopEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	v, err := encodeHopBatch(mem, enc, hopTestSchema, a, b)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := hopSchemaMessage(mem, hopTestSchema)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := newHopDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	recs, err := decodeHopBatch(mem, dec, hopTestSchema, msg, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !array.RecordEqual(recs[0], a) || !array.RecordEqual(recs[1], b) {
		t.Fatalf("decoded %d records, want the 2 encoded ones", len(recs))
	}
	for _, r := range recs {
		r.Release()
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	otherMsg, err := hopSchemaMessage(mem, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeHopBatch(mem, dec, other, otherMsg, v); err == nil {
		t.Fatal("a batch of another schema decoded")
	}
	for _, ts := range []int64{math.MinInt64, 0, 1234567} {
		got, w, err := decodeHopMarker(encodeHopMarker(ts, "w1"))
		if err != nil || got != ts || w != "w1" {
			t.Fatalf("marker %d: got %d %q %v", ts, got, w, err)
		}
	}
	if _, _, err := decodeHopMarker([]byte{1, 2}); err == nil {
		t.Fatal("a 2-byte marker decoded")
	}
}

// FuzzDecodeHopBatch: a hop record's value is outside input (another
// process wrote it): decoding must return rows or an error, never panic
// or leak.
func FuzzDecodeHopBatch(f *testing.F) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rec := hopRecord(mem, 0, 20, 3)
	enc, err := newHopEncoder()
	if err != nil {
		f.Fatal(err)
	}
	dec, err := newHopDecoder()
	if err != nil {
		f.Fatal(err)
	}
	raw, err := encodeHopBatch(mem, nil, hopTestSchema, rec)
	if err != nil {
		f.Fatal(err)
	}
	v, err := encodeHopBatch(mem, enc, hopTestSchema, rec)
	rec.Release()
	if err != nil {
		f.Fatal(err)
	}
	msg, err := hopSchemaMessage(mem, hopTestSchema)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v)
	f.Add([]byte{})
	f.Add(v[:len(v)/2])
	f.Add(enc.EncodeAll(raw[:len(raw)-20], nil)) // valid zstd, truncated IPC
	f.Fuzz(func(t *testing.T, b []byte) {
		m := memory.NewCheckedAllocator(memory.NewGoAllocator())
		recs, err := decodeHopBatch(m, dec, hopTestSchema, msg, b)
		if err == nil {
			for _, r := range recs {
				r.Release()
			}
		}
		_, _, _ = decodeHopMarker(b)
		m.AssertSize(t, 0)
	})
}
