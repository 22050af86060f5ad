package server

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// firehose is a source always far ahead of the engine: every LatestOffset
// reports another billion rows. Rows are generated lazily in Read, so the
// only way memory can grow is the engine reading (or keeping) too much.
// It honours a per-trigger limit (admission control, as Kafka's
// maxOffsetsPerTrigger) and refuses a Read far beyond it, so that an engine
// ignoring the limit fails the test instead of exhausting the machine.
type firehose struct {
	mem        memory.Allocator
	perTrigger int64
	latest     atomic.Int64
}

var firehoseSchema = arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64}}, nil)

func parseRowOffset(o arrowstream.Offset) (int64, error) {
	if o == nil {
		return 0, nil
	}
	return strconv.ParseInt(string(o), 10, 64)
}

func (f *firehose) Schema() *arrow.Schema { return firehoseSchema }

func (f *firehose) LatestOffset(context.Context) (arrowstream.Offset, error) {
	return arrowstream.Offset(strconv.FormatInt(f.latest.Add(1_000_000_000), 10)), nil
}

func (f *firehose) LatestOffsetFrom(ctx context.Context, start arrowstream.Offset) (arrowstream.Offset, error) {
	from, err := parseRowOffset(start)
	if err != nil {
		return nil, err
	}
	f.latest.Add(1_000_000_000)
	return arrowstream.Offset(strconv.FormatInt(from+f.perTrigger, 10)), nil
}

func (f *firehose) Read(_ context.Context, start, end arrowstream.Offset) (vector.Operator, error) {
	from, err := parseRowOffset(start)
	if err != nil {
		return nil, err
	}
	to, err := parseRowOffset(end)
	if err != nil {
		return nil, err
	}
	if to-from > 10*f.perTrigger {
		return nil, fmt.Errorf("firehose: asked for %d rows in one epoch, limit %d: admission control ignored", to-from, f.perTrigger)
	}
	return &rowGen{mem: f.mem, next: from, end: to}, nil
}

func (f *firehose) Commit(context.Context, arrowstream.Offset) error { return nil }
func (f *firehose) Close() error                                     { return nil }

// rowGen produces values [next, end) in records of up to 1024 rows.
type rowGen struct {
	mem       memory.Allocator
	next, end int64
}

func (g *rowGen) Schema() *arrow.Schema { return firehoseSchema }
func (g *rowGen) Close() error          { return nil }

func (g *rowGen) Next(context.Context) (arrow.Record, error) {
	if g.next >= g.end {
		return nil, io.EOF
	}
	n := min(1024, g.end-g.next)
	b := array.NewInt64Builder(g.mem)
	defer b.Release()
	b.Reserve(int(n))
	for i := range n {
		b.UnsafeAppend(g.next + i)
	}
	g.next += n
	col := b.NewArray()
	defer col.Release()
	return array.NewRecord(firehoseSchema, []arrow.Array{col}, n), nil
}

// TestBackPressureFasterSourceBoundedMemory runs a query from a source that
// is always a billion rows ahead into a memory-sink table with epoch
// retention, and samples the allocator after every epoch: the bytes in use
// must stay under a bound set by the per-trigger limit and the retention,
// and must not grow between the first and the second half of the run.
func TestBackPressureFasterSourceBoundedMemory(t *testing.T) {
	const (
		perTrigger = 4096
		maxEpochs  = 10
		epochs     = 60
	)
	checked := poisonmem.New()
	defer checked.AssertSize(t, 0)
	mem := &peakAllocator{Allocator: checked}
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true, Logger: quietLogger()})
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{})
	defer func() {
		for _, n := range cat.List() {
			if tb, ok := cat.Drop(n); ok {
				tb.Close()
			}
		}
	}()
	src := &firehose{mem: mem, perTrigger: perTrigger}
	sess.RegisterStream("firehose", src)
	ctx := context.Background()
	q, err := sess.ReadStream("firehose").Select("value", "value * 2 AS doubled").
		WriteStream().Format("memory").QueryName("drain").Option("maxEpochs", strconv.Itoa(maxEpochs)).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	var firstHalf, secondHalf int64
	deadline := time.Now().Add(testutil.Scaled(5 * time.Minute))
	for seen := int64(-1); seen < epochs; {
		if err := q.Exception(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d epochs in 60s", seen)
		}
		p := q.LastProgress()
		if p == nil || p.BatchID == seen {
			time.Sleep(time.Millisecond)
			continue
		}
		seen = p.BatchID
		if p.NumInputRows > perTrigger {
			t.Fatalf("epoch %d read %d rows, limit %d", p.BatchID, p.NumInputRows, perTrigger)
		}
		cur := mem.cur.Load()
		if seen < epochs/2 {
			firstHalf = max(firstHalf, cur)
		} else {
			secondHalf = max(secondHalf, cur)
		}
	}
	q.Stop()
	tab, _ := cat.Lookup("drain")
	size := tab.Size()
	// One epoch in flight (input, projection, output) on top of the
	// retained ones, with room for Arrow's 64-byte padding and builders'
	// growth: 16 bytes per row for each column, twice over. Without retention
	// the table alone passes this bound at 60 epochs.
	epochBytes := int64(perTrigger * 16 * 2)
	bound := 2 * (maxEpochs + 1) * epochBytes
	t.Logf("backpressure: epochs=%d rowsPerEpoch=%d retainedEpochs=%d retainedBytes=%d maxInUse(first half)=%d maxInUse(second half)=%d peak=%d bound=%d",
		epochs, perTrigger, size.Epochs, size.Bytes, firstHalf, secondHalf, mem.peak.Load(), bound)
	if size.Epochs > maxEpochs {
		t.Fatalf("%d epochs retained, limit %d", size.Epochs, maxEpochs)
	}
	if mem.peak.Load() > bound {
		t.Fatalf("peak %d bytes over the bound %d", mem.peak.Load(), bound)
	}
	// Growth: once retention is full, memory in use stays flat (10% slack
	// for records of different padding).
	if secondHalf > firstHalf+firstHalf/10 {
		t.Fatalf("memory grows: max %d bytes in the first half, %d in the second", firstHalf, secondHalf)
	}
}
