package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"

	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestParseContinuousTrigger(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Trigger
		err  string
	}{
		{in: "continuous", want: Continuous(time.Second)},
		{in: "Continuous 100 ms", want: Continuous(100 * time.Millisecond)},
		{in: "continuous 2 seconds", want: Continuous(2 * time.Second)},
		{in: "continuous 0", err: "must be positive"},
		{in: "continuous soon", err: "cannot parse duration"},
	} {
		got, err := ParseTrigger(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTrigger(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || !got.IsContinuous() {
			t.Errorf("ParseTrigger(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if s := Continuous(0).String(); s != "Continuous(1s)" {
		t.Errorf("String() = %q", s)
	}
}

func TestContinuousUnsupportedOperations(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	other := NewMemoryStream(mem, valueSchema)
	defer other.Close()
	s.RegisterStream("other", other)
	for _, tc := range []struct {
		name string
		df   *DataFrame
		mode OutputMode
		opts map[string]string
		err  string
	}{
		{"dedup", s.ReadStream("input").DropDuplicates("value"), Append, nil, "does not support Deduplicate operations"},
		{"limit", s.ReadStream("input").Limit(3), Append, nil, "does not support Limit operations"},
		{"stream-stream join", s.ReadStream("input").Alias("a").Join(s.ReadStream("other").Alias("b"), "a.value = b.value", "inner"), Append, nil, "stream-stream join"},
		{"current time", s.ReadStream("input").WithColumn("now", "current_timestamp()"), Append, nil, "current time operations"},
		{"aggregation in complete mode", s.ReadStream("input").GroupBy("value").Count(), Complete, nil, "only in Update output mode"},
		{"watermark without aggregation", s.ReadStream("input").WithColumn("ts", "timestamp_seconds(value)").WithWatermark("ts", "1 second"), Append, nil, "outside an Update-mode aggregation"},
		{"arrival visibility with aggregation", s.ReadStream("input").GroupBy("value").Count(), Update, map[string]string{"continuous.visibility": "arrival"}, "once per epoch"},
		{"bad visibility", s.ReadStream("input"), Append, map[string]string{"continuous.visibility": "sometimes"}, `continuous.visibility="sometimes"`},
		{"bad pending bound", s.ReadStream("input"), Append, map[string]string{"continuous.maxPendingBytes": "-1"}, "maxPendingBytes"},
		{"arrival on a sink without it", s.ReadStream("input"), Append, map[string]string{"continuous.visibility": "arrival"}, "cannot show uncommitted rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.df.WriteStream().Sink(&collectsink.Sink{}).OutputMode(tc.mode).Trigger(Continuous(time.Second)).
				Option("checkpointLocation", t.TempDir())
			for k, v := range tc.opts {
				w.Option(k, v)
			}
			q, err := w.Start(ctx)
			if err == nil {
				q.Stop()
				t.Fatalf("started; want error %q", tc.err)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %q; want it to contain %q", err, tc.err)
			}
		})
	}
}

// startContinuous starts value → (value, value*10) for even values with a
// continuous trigger on clock.
func startContinuous(t *testing.T, s *Session, dir string, sink Sink, interval time.Duration, opts map[string]string) *StreamingQuery {
	t.Helper()
	w := s.ReadStream("input").Filter("value % 2 = 0").Select("value", "value * 10 AS tens").
		WriteStream().Sink(sink).Trigger(Continuous(interval)).Option("checkpointLocation", dir)
	for k, v := range opts {
		w.Option(k, v)
	}
	q, err := w.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestContinuousExactlyOnceAcrossRestart(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	var want []vt.Row
	add := func(vals ...int) {
		addInts(t, src, vals...)
		for _, v := range vals {
			if v%2 == 0 {
				want = append(want, vt.Row{int32(v), int32(v * 10)})
			}
		}
	}
	q := startContinuous(t, s, dir, sink, 20*time.Millisecond, nil)
	for i := 0; i < 10; i++ {
		add(3*i, 3*i+1, 3*i+2)
		if i%3 == 0 {
			time.Sleep(25 * time.Millisecond) // let epochs end between arrivals
		}
	}
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	q.Stop()
	if got := sink.All(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
		t.Fatalf("before restart:\n%swant\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	epochs := len(sink.Order())
	if epochs < 2 {
		t.Fatalf("want several epochs, got %d", epochs)
	}
	last := q.LastProgress()
	if last == nil || last.Latency == nil || last.NumInputRows == 0 {
		t.Fatalf("progress lacks input rows or latency: %+v", last)
	}
	// Epochs are recorded in the offset and commit logs like micro-batches.
	offsets, commits, err := checkpoint.OpenEpochLogs(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := offsets.Get(0); !ok || err != nil {
		t.Fatalf("offsets of epoch 0: %v %v", ok, err)
	}
	if _, ok, err := commits.Get(0); !ok || err != nil {
		t.Fatalf("commit of epoch 0: %v %v", ok, err)
	}
	commits.Close()
	add(40, 41, 42)
	q = startContinuous(t, s, dir, sink, 20*time.Millisecond, nil)
	defer q.Stop()
	add(44)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if got := sink.All(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
		t.Fatalf("after restart:\n%swant\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	if sink.Order()[epochs] != int64(epochs) {
		t.Fatalf("epoch ids after restart: %v", sink.Order())
	}
}

// A sink failure after the epoch's offsets are written: the restarted query
// replays exactly that epoch, so nothing is lost or written twice.
func TestContinuousReplaysUncommittedEpoch(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	boom := errors.New("sink down")
	sink := &collectsink.Sink{Fail: func(epoch int64) error {
		if epoch == 1 {
			return boom
		}
		return nil
	}}
	q := startContinuous(t, s, dir, sink, 10*time.Millisecond, nil)
	addInts(t, src, 2, 4)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	addInts(t, src, 6, 8)
	err := q.AwaitTermination(ctx)
	if !errors.Is(err, boom) {
		t.Fatalf("query ended with %v; want the sink's error", err)
	}
	offsets, commits, err := checkpoint.OpenEpochLogs(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := offsets.Get(1); !ok || err != nil {
		t.Fatalf("epoch 1's offsets were not written before the sink: %v %v", ok, err)
	}
	commits.Close()
	addInts(t, src, 10)
	sink.Fail = nil
	q = startContinuous(t, s, dir, sink, 10*time.Millisecond, nil)
	defer q.Stop()
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	want := []vt.Row{{int32(2), int32(20)}, {int32(4), int32(40)}, {int32(6), int32(60)}, {int32(8), int32(80)}, {int32(10), int32(100)}}
	if got := sink.All(); !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
		t.Fatalf("got\n%swant\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	replayed := sink.Epoch(1)
	if !vt.RowsEqual(vt.SortRows(replayed), vt.SortRows(want[2:4])) {
		t.Fatalf("epoch 1 replayed as\n%swant exactly its recorded range", vt.FormatRows(replayed))
	}
}

// A bound on the open epoch's output commits epochs early instead of
// growing memory: with a clock that never ticks, epochs still commit.
func TestContinuousPendingBoundCommitsEarly(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	clock := arrowstreamtest.NewManualClock(time.Unix(0, 0))
	s := NewSession(SessionOptions{Allocator: mem, Clock: clock})
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	sink := &collectsink.Sink{}
	q := startContinuous(t, s, t.TempDir(), sink, time.Hour, map[string]string{"continuous.maxPendingBytes": "1"})
	defer q.Stop()
	for i := 0; i < 5; i++ {
		addInts(t, src, 2*i)
	}
	// No ProcessAllAvailable (it would end the epoch itself): the bound
	// alone must commit.
	deadline := time.Now().Add(10 * time.Second)
	for len(sink.All()) < 5 {
		if time.Now().After(deadline) || !q.IsActive() {
			t.Fatalf("%d rows committed; want 5 (%v)", len(sink.All()), q.Exception())
		}
		time.Sleep(time.Millisecond)
	}
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestContinuousAggregationUpdateMode(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	start := func() *StreamingQuery {
		q, err := s.ReadStream("input").GroupBy("value % 3 AS k").Count().
			WriteStream().Sink(sink).OutputMode(Update).Trigger(Continuous(time.Hour)).
			Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start()
	addInts(t, src, 1, 2, 3, 4)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	q.Stop()
	q = start()
	defer q.Stop()
	addInts(t, src, 5, 6)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	latest := map[string]int64{}
	for _, r := range sink.All() {
		latest[fmt.Sprint(r[0])] = r[1].(int64)
	}
	want := map[string]int64{"0": 2, "1": 2, "2": 2}
	for k, n := range want {
		if latest[k] != n {
			t.Fatalf("latest counts %v; want %v", latest, want)
		}
	}
}

// A stream-static join runs per arrival like any map-like operator, and
// foreachBatch receives each committed epoch once.
func TestContinuousStreamStaticJoinForeachBatch(t *testing.T) {
	ctx := context.Background()
	s, mem := newTestSession(t)
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	names := arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.Int32}, {Name: "name", Type: vector.String}}, nil)
	b := array.NewRecordBuilder(mem, names)
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"one", "two", "three"}, nil)
	dim := b.NewRecord()
	b.Release()
	defer dim.Release()
	if err := s.RegisterTable("names", names, dim); err != nil {
		t.Fatal(err)
	}
	defer s.DropTable("names")
	var mu sync.Mutex
	var got []vt.Row
	var epochs []int64
	q, err := s.ReadStream("input").Join(s.Table("names"), "value = id", "left").Select("value", "name").
		WriteStream().Trigger(Continuous(time.Hour)).Option("checkpointLocation", t.TempDir()).
		ForeachBatch(func(_ context.Context, recs []arrow.Record, epoch int64) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, vt.RowsOf(recs...)...)
			epochs = append(epochs, epoch)
			return nil
		}).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	addInts(t, src, 1, 4)
	addInts(t, src, 3)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	addInts(t, src, 2)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []vt.Row{{int32(1), "one"}, {int32(4), nil}, {int32(3), "three"}, {int32(2), "two"}}
	if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
		t.Fatalf("got\n%swant\n%s", vt.FormatRows(got), vt.FormatRows(want))
	}
	if len(epochs) != 2 || epochs[0] != 0 || epochs[1] != 1 {
		t.Fatalf("epochs %v; want [0 1]", epochs)
	}
}
