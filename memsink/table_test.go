package memsink_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

type step struct {
	epoch   int64
	rows    []vt.Row
	failAt  int // >0: the operator fails after this many records
	wantErr string
}

func TestAddBatchSemantics(t *testing.T) {
	cases := []struct {
		name        string
		mode        arrowstream.OutputMode
		steps       []step
		wantAll     []vt.Row // in commit order
		wantLatest  int64
		wantLast    []vt.Row
		wantEpochs  []int64 // History
		wantRecords int     // with one-record epochs (batch 1024); -1: don't check
	}{
		{
			name: "append adds", mode: arrowstream.Append,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a"), r(2, nil)}}, {epoch: 1, rows: []vt.Row{r(3, "c")}}},
			wantAll: []vt.Row{r(1, "a"), r(2, nil), r(3, "c")}, wantLatest: 1, wantLast: []vt.Row{r(3, "c")},
			wantEpochs: []int64{0, 1}, wantRecords: 2,
		},
		{
			name: "update appends", mode: arrowstream.Update,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 1, rows: []vt.Row{r(1, "b")}}},
			wantAll: []vt.Row{r(1, "a"), r(1, "b")}, wantLatest: 1, wantLast: []vt.Row{r(1, "b")},
			wantEpochs: []int64{0, 1}, wantRecords: 2,
		},
		{
			name: "complete replaces", mode: arrowstream.Complete,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 1, rows: []vt.Row{r(1, "b"), r(2, "c")}}},
			wantAll: []vt.Row{r(1, "b"), r(2, "c")}, wantLatest: 1, wantLast: []vt.Row{r(1, "b"), r(2, "c")},
			wantEpochs: []int64{1}, wantRecords: 1,
		},
		{
			name: "replay with different rows changes nothing", mode: arrowstream.Append,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 0, rows: []vt.Row{r(9, "z")}}},
			wantAll: []vt.Row{r(1, "a")}, wantLatest: 0, wantLast: []vt.Row{r(1, "a")},
			wantEpochs: []int64{0}, wantRecords: 1,
		},
		{
			name: "replay of an older epoch is ignored", mode: arrowstream.Append,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 1, rows: []vt.Row{r(2, "b")}}, {epoch: 0, rows: []vt.Row{r(9, "z")}}},
			wantAll: []vt.Row{r(1, "a"), r(2, "b")}, wantLatest: 1, wantLast: []vt.Row{r(2, "b")},
			wantEpochs: []int64{0, 1}, wantRecords: 2,
		},
		{
			name: "complete replay keeps the committed result", mode: arrowstream.Complete,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 1, rows: []vt.Row{r(2, "b")}}, {epoch: 1, rows: []vt.Row{r(3, "c")}}},
			wantAll: []vt.Row{r(2, "b")}, wantLatest: 1, wantLast: []vt.Row{r(2, "b")},
			wantEpochs: []int64{1}, wantRecords: 1,
		},
		{
			name: "empty epochs advance the latest epoch", mode: arrowstream.Append,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 1}, {epoch: 2}},
			wantAll: []vt.Row{r(1, "a")}, wantLatest: 2, wantLast: nil,
			wantEpochs: []int64{0, 1, 2}, wantRecords: 1,
		},
		{
			name: "complete empty epoch empties the table", mode: arrowstream.Complete,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 1}},
			wantAll: nil, wantLatest: 1, wantLast: nil,
			wantEpochs: []int64{1}, wantRecords: 0,
		},
		{
			name: "epoch ids need not be contiguous", mode: arrowstream.Append,
			steps:   []step{{epoch: 0, rows: []vt.Row{r(1, "a")}}, {epoch: 19, rows: []vt.Row{r(2, "b")}}, {epoch: 5, rows: []vt.Row{r(9, "z")}}},
			wantAll: []vt.Row{r(1, "a"), r(2, "b")}, wantLatest: 19, wantLast: []vt.Row{r(2, "b")},
			wantEpochs: []int64{0, 19}, wantRecords: 2,
		},
		{
			name: "failure mid-epoch leaves the table unchanged", mode: arrowstream.Append,
			steps: []step{
				{epoch: 0, rows: []vt.Row{r(1, "a")}},
				{epoch: 1, rows: []vt.Row{r(2, "b"), r(3, "c"), r(4, "d")}, failAt: 1, wantErr: `table "q": epoch 1: boom`},
				{epoch: 1, rows: []vt.Row{r(5, "e")}},
			},
			wantAll: []vt.Row{r(1, "a"), r(5, "e")}, wantLatest: 1, wantLast: []vt.Row{r(5, "e")},
			wantEpochs: []int64{0, 1}, wantRecords: 2,
		},
		{
			name: "complete failure keeps the previous result", mode: arrowstream.Complete,
			steps: []step{
				{epoch: 0, rows: []vt.Row{r(1, "a")}},
				{epoch: 1, rows: []vt.Row{r(2, "b"), r(3, "c")}, failAt: 1, wantErr: "boom"},
			},
			wantAll: []vt.Row{r(1, "a")}, wantLatest: 0, wantLast: []vt.Row{r(1, "a")},
			wantEpochs: []int64{0}, wantRecords: 1,
		},
	}
	for _, c := range cases {
		for _, shape := range vt.Shapes {
			t.Run(c.name+"/"+shape.String(), func(t *testing.T) {
				mem := vt.NewAllocator(t)
				tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: c.mode}, memsink.Options{})
				for _, s := range c.steps {
					var in vector.Operator = op(t, mem, kv, s.rows, shape)
					if s.failAt > 0 {
						in = &failing{Operator: in, n: s.failAt}
					}
					err := tbl.AddBatch(context.Background(), s.epoch, in)
					if s.wantErr != "" {
						if err == nil || !strings.Contains(err.Error(), s.wantErr) || !errors.Is(err, errBoom) {
							t.Fatalf("epoch %d: want error %q, got %v", s.epoch, s.wantErr, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("epoch %d: %v", s.epoch, err)
					}
				}
				checkOrdered(t, "AllData", c.wantAll, rowsOf(tbl.AllData()))
				checkOrdered(t, "LatestBatchData", c.wantLast, rowsOf(tbl.LatestBatchData()))
				if got := tbl.LatestEpoch(); got != c.wantLatest {
					t.Errorf("LatestEpoch = %d, want %d", got, c.wantLatest)
				}
				var epochs []int64
				for _, h := range tbl.History() {
					epochs = append(epochs, h.Epoch)
				}
				if fmt.Sprint(epochs) != fmt.Sprint(c.wantEpochs) {
					t.Errorf("History epochs = %v, want %v", epochs, c.wantEpochs)
				}
				s := tbl.Snapshot()
				defer s.Release()
				if s.NumRows() != int64(len(c.wantAll)) || s.LatestEpoch() != c.wantLatest {
					t.Errorf("snapshot: %d rows at epoch %d, want %d at %d", s.NumRows(), s.LatestEpoch(), len(c.wantAll), c.wantLatest)
				}
				if shape.BatchSize == 1024 && len(s.Records()) != c.wantRecords {
					t.Errorf("%d records, want %d", len(s.Records()), c.wantRecords)
				}
				for _, rec := range s.Records() {
					if rec.Schema() != kv || rec.NumRows() == 0 {
						t.Errorf("record with schema %v and %d rows", rec.Schema(), rec.NumRows())
					}
				}
			})
		}
	}
}

func TestReplayDrainsAndCloses(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	add(t, tbl, mem, 3, r(1, "a"))
	before := mem.CurrentAlloc()
	in := &counting{Operator: op(t, mem, kv, []vt.Row{r(7, "x"), r(8, "y"), r(9, "z")}, vt.Shape{BatchSize: 1})}
	if err := tbl.AddBatch(context.Background(), 2, in); err != nil {
		t.Fatal(err)
	}
	if !in.eof || !in.closed || in.pulled != 3 {
		t.Errorf("replayed input: eof=%v closed=%v pulled=%d, want drained and closed", in.eof, in.closed, in.pulled)
	}
	if after := mem.CurrentAlloc(); after != before {
		t.Errorf("replay kept memory: %d bytes before, %d after", before, after)
	}
	// A failing replay reports the failure but still changes nothing.
	bad := &failing{Operator: op(t, mem, kv, []vt.Row{r(7, "x")}, vt.Shape{}), n: 0}
	if err := tbl.AddBatch(context.Background(), 3, bad); !errors.Is(err, errBoom) || !bad.closed {
		t.Errorf("failing replay: err %v, closed %v", err, bad.closed)
	}
	checkOrdered(t, "AllData", []vt.Row{r(1, "a")}, rowsOf(tbl.AllData()))
}

func TestAddBatchRejects(t *testing.T) {
	other := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}, {Name: "v", Type: vector.Int64}}, nil)
	cases := []struct {
		name    string
		epoch   int64
		schema  *arrow.Schema
		wantErr string
	}{
		{"negative epoch", -1, kv, `table "q": negative epoch -1`},
		{"wrong column type", 0, other, `epoch 0: input has columns (k bigint, v bigint), table has (k bigint, v string)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
			in := &counting{Operator: op(t, mem, c.schema, []vt.Row{r(1, nil)}, vt.Shape{})}
			err := tbl.AddBatch(context.Background(), c.epoch, in)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("want error %q, got %v", c.wantErr, err)
			}
			if !in.closed || tbl.LatestEpoch() != -1 {
				t.Errorf("closed %v, latest %d", in.closed, tbl.LatestEpoch())
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	cases := []struct {
		name    string
		info    arrowstream.SinkInfo
		opts    memsink.Options
		wantErr string
	}{
		{"no schema", arrowstream.SinkInfo{QueryName: "q"}, memsink.Options{}, "no schema"},
		{"negative limit", arrowstream.SinkInfo{QueryName: "q", Schema: kv}, memsink.Options{MaxRows: -1}, "negative retention limit"},
		{"view needs update mode", arrowstream.SinkInfo{QueryName: "q", Schema: kv, KeyColumns: []string{"k"}}, memsink.Options{UpdateAsView: true}, "needs update output mode, query uses append"},
		{"view needs keys", arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Update}, memsink.Options{UpdateAsView: true}, "needs key columns"},
		{"view key unknown", arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Update, KeyColumns: []string{"x"}}, memsink.Options{UpdateAsView: true}, `view key column "x" not found (columns: k bigint, v string)`},
		{"persist needs checkpoint", arrowstream.SinkInfo{QueryName: "q", Schema: kv}, memsink.Options{Persist: true}, "needs a checkpoint directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			_, err := memsink.New(mem, c.info, c.opts)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("want error %q, got %v", c.wantErr, err)
			}
		})
	}
}

// TestLongRecordsAreSlicedNotCopied: records over MaxRecordRows rows are
// split into zero-copy slices; shorter ones are kept as they are.
func TestLongRecordsAreSlicedNotCopied(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}}, nil)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append, Schema: schema}, memsink.Options{})
	const n = 3*memsink.MaxRecordRows + 5
	b := array.NewInt64Builder(mem)
	for i := 0; i < n; i++ {
		b.Append(int64(i))
	}
	col := b.NewArray()
	b.Release()
	in := array.NewRecord(schema, []arrow.Array{col}, n)
	col.Release()
	scan, err := vector.NewScan(schema, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.AddBatch(context.Background(), 0, scan); err != nil {
		t.Fatal(err)
	}
	s := tbl.Snapshot()
	defer s.Release()
	recs := s.Records()
	if len(recs) != 4 || s.NumRows() != n {
		t.Fatalf("%d records, %d rows; want 4 records, %d rows", len(recs), s.NumRows(), n)
	}
	want := in.Column(0).Data().Buffers()[1]
	next := int64(0)
	for i, rec := range recs {
		if rec.NumRows() > memsink.MaxRecordRows {
			t.Errorf("record %d has %d rows", i, rec.NumRows())
		}
		if rec.Column(0).Data().Buffers()[1] != want {
			t.Errorf("record %d does not share the input's buffer", i)
		}
		if v := rec.Column(0).(*array.Int64).Value(0); v != next {
			t.Errorf("record %d starts at %d, want %d", i, v, next)
		}
		next += rec.NumRows()
	}
	wantBytes := 0
	for _, b := range in.Column(0).Data().Buffers() {
		if b != nil {
			wantBytes += b.Cap()
		}
	}
	if sz := tbl.Size(); sz.Bytes != int64(wantBytes) || sz.Rows != n || sz.Records != 4 {
		t.Errorf("Size = %+v, want %d bytes (the input's buffers, once), %d rows, 4 records", sz, wantBytes, n)
	}
	in.Release()
}

// TestSchemaRelabel: records whose schema differs only in nullability are
// kept with the table's schema (zero-copy).
func TestSchemaRelabel(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	loose := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64, Nullable: true}, {Name: "v", Type: vector.String, Nullable: true}}, nil)
	if err := tbl.AddBatch(context.Background(), 0, op(t, mem, loose, []vt.Row{r(1, "a")}, vt.Shape{})); err != nil {
		t.Fatal(err)
	}
	s := tbl.Snapshot()
	defer s.Release()
	if got := s.Records()[0].Schema(); got != kv {
		t.Errorf("record schema %s, want the table's", got)
	}
}

func TestCloseAndClear(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	add(t, tbl, mem, 0, r(1, "a"))
	held := tbl.Snapshot()
	if err := tbl.Clear(); err != nil {
		t.Fatal(err)
	}
	if tbl.LatestEpoch() != -1 || len(rowsOf(tbl.AllData())) != 0 {
		t.Fatalf("after Clear: latest %d", tbl.LatestEpoch())
	}
	add(t, tbl, mem, 0, r(2, "b")) // any epoch is accepted again
	checkOrdered(t, "after Clear and re-add", []vt.Row{r(2, "b")}, rowsOf(tbl.AllData()))
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	in := &counting{Operator: op(t, mem, kv, []vt.Row{r(3, "c")}, vt.Shape{})}
	if err := tbl.AddBatch(context.Background(), 1, in); !errors.Is(err, memsink.ErrClosed) || !in.closed {
		t.Errorf("AddBatch after Close: %v (input closed %v)", err, in.closed)
	}
	if err := tbl.Clear(); !errors.Is(err, memsink.ErrClosed) {
		t.Errorf("Clear after Close: %v", err)
	}
	if n := len(rowsOf(tbl.Snapshot())); n != 0 {
		t.Errorf("snapshot after Close has %d rows", n)
	}
	// A snapshot taken before Clear and Close still reads its rows.
	checkOrdered(t, "held snapshot", []vt.Row{r(1, "a")}, rowsOf(held))
	if err := tbl.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDebugString(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	add(t, tbl, mem, 0, r(1, "a"), r(2, nil))
	add(t, tbl, mem, 1)
	add(t, tbl, mem, 2, r(3, "c"))
	want := "0: [1,'a'] [2,NULL]\n2: [3,'c']\n"
	if got := tbl.DebugString(); got != want {
		t.Errorf("DebugString:\n%s\nwant:\n%s", got, want)
	}
}
