package memsink_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// clock returns commit times 1s apart from a fixed start.
func clock() func() time.Time {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	n := 0
	return func() time.Time {
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

func commitTime(i int) time.Time {
	return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
}

type read struct {
	name       string
	asOf       bool // AsOf(epoch), else Since(epoch)
	epoch      int64
	want       []vt.Row // in order
	wantLatest int64
	wantErr    string
}

func TestTimeTravel(t *testing.T) {
	cases := []struct {
		name   string
		mode   arrowstream.OutputMode
		opts   memsink.Options
		epochs map[int64][]vt.Row
		order  []int64
		reads  []read
		// History: epoch:rows[:superseded] per retained epoch.
		wantHistory string
	}{
		{
			name: "append", mode: arrowstream.Append,
			order:  []int64{0, 2, 5},
			epochs: map[int64][]vt.Row{0: {r(1, "a")}, 2: {r(2, "b"), r(3, "c")}, 5: {r(4, "d")}},
			reads: []read{
				{name: "as of first", asOf: true, epoch: 0, want: []vt.Row{r(1, "a")}, wantLatest: 0},
				{name: "as of a gap", asOf: true, epoch: 1, want: []vt.Row{r(1, "a")}, wantLatest: 0},
				{name: "as of middle", asOf: true, epoch: 2, want: []vt.Row{r(1, "a"), r(2, "b"), r(3, "c")}, wantLatest: 2},
				{name: "as of latest", asOf: true, epoch: 5, want: []vt.Row{r(1, "a"), r(2, "b"), r(3, "c"), r(4, "d")}, wantLatest: 5},
				{name: "as of the future", asOf: true, epoch: 6, wantErr: "epoch 6 is not committed yet (retained epochs 0..5): epoch not retained"},
				{name: "as of before the first", asOf: true, epoch: -1, wantErr: "epoch -1 is not retained (retained epochs 0..5)"},
				{name: "since nothing", epoch: -1, want: []vt.Row{r(1, "a"), r(2, "b"), r(3, "c"), r(4, "d")}, wantLatest: 5},
				{name: "since first", epoch: 0, want: []vt.Row{r(2, "b"), r(3, "c"), r(4, "d")}, wantLatest: 5},
				{name: "since a gap", epoch: 3, want: []vt.Row{r(4, "d")}, wantLatest: 5},
				{name: "since latest", epoch: 5, want: nil, wantLatest: 5},
			},
			wantHistory: "0:1 2:2 5:1",
		},
		{
			name: "complete with history", mode: arrowstream.Complete, opts: memsink.Options{MaxEpochs: 3},
			order:  []int64{0, 1, 2, 3},
			epochs: map[int64][]vt.Row{0: {r(1, "a")}, 1: {r(1, "b")}, 2: {r(1, "c"), r(2, "c")}, 3: {r(1, "d")}},
			reads: []read{
				{name: "as of superseded", asOf: true, epoch: 2, want: []vt.Row{r(1, "c"), r(2, "c")}, wantLatest: 2},
				{name: "as of oldest retained", asOf: true, epoch: 1, want: []vt.Row{r(1, "b")}, wantLatest: 1},
				{name: "as of evicted", asOf: true, epoch: 0, wantErr: "epoch 0 is not retained (retained epochs 1..3)"},
				{name: "since superseded returns the result", epoch: 0, want: []vt.Row{r(1, "d")}, wantLatest: 3},
				{name: "since latest", epoch: 3, want: nil, wantLatest: 3},
			},
			wantHistory: "1:1:superseded 2:2:superseded 3:1",
		},
		{
			name: "complete keeps only the latest by default", mode: arrowstream.Complete,
			order:  []int64{0, 1},
			epochs: map[int64][]vt.Row{0: {r(1, "a")}, 1: {r(1, "b")}},
			reads: []read{
				{name: "as of superseded", asOf: true, epoch: 0, wantErr: "epoch 0 is not retained (retained epochs 1..1)"},
			},
			wantHistory: "1:1",
		},
		{
			name: "append evicted", mode: arrowstream.Append, opts: memsink.Options{MaxEpochs: 2},
			order:  []int64{0, 1, 2},
			epochs: map[int64][]vt.Row{0: {r(1, "a")}, 1: {r(2, "b")}, 2: {r(3, "c")}},
			reads: []read{
				{name: "since before eviction", epoch: -1, wantErr: "rows committed after epoch -1 were evicted through epoch 0 (retained epochs 1..2): epoch not retained"},
				{name: "since evicted epoch", epoch: 0, want: []vt.Row{r(2, "b"), r(3, "c")}, wantLatest: 2},
				{name: "as of oldest", asOf: true, epoch: 1, want: []vt.Row{r(2, "b")}, wantLatest: 1},
			},
			wantHistory: "1:1 2:1",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			c.opts.Now = clock()
			tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: c.mode}, c.opts)
			for _, e := range c.order {
				add(t, tbl, mem, e, c.epochs[e]...)
			}
			for _, rd := range c.reads {
				var s *memsink.Snapshot
				var err error
				if rd.asOf {
					s, err = tbl.AsOf(rd.epoch)
				} else {
					s, err = tbl.Since(rd.epoch)
				}
				if rd.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), rd.wantErr) || !errors.Is(err, memsink.ErrNotRetained) {
						t.Errorf("%s: want error %q, got %v", rd.name, rd.wantErr, err)
					}
					if s != nil {
						s.Release()
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", rd.name, err)
				}
				if s.LatestEpoch() != rd.wantLatest {
					t.Errorf("%s: LatestEpoch %d, want %d", rd.name, s.LatestEpoch(), rd.wantLatest)
				}
				checkOrdered(t, rd.name, rd.want, rowsOf(s))
			}
			var hist []string
			for _, h := range tbl.History() {
				e := fmt.Sprintf("%d:%d", h.Epoch, h.Rows)
				if h.Superseded {
					e += ":superseded"
				}
				if h.Replaced != (c.mode == arrowstream.Complete) {
					t.Errorf("epoch %d: Replaced %v in %s mode", h.Epoch, h.Replaced, c.mode)
				}
				if h.Bytes <= 0 && h.Rows > 0 || h.CommitTime.IsZero() {
					t.Errorf("epoch %d: bytes %d, commit time %v", h.Epoch, h.Bytes, h.CommitTime)
				}
				hist = append(hist, e)
			}
			if got := strings.Join(hist, " "); got != c.wantHistory {
				t.Errorf("History = %q, want %q", got, c.wantHistory)
			}
		})
	}
}

// TestRecordsWithEpoch: incremental polling with Since and the _epoch and
// _commit_timestamp columns.
func TestRecordsWithEpoch(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{Now: clock()})
	add(t, tbl, mem, 0, r(1, "a"))
	add(t, tbl, mem, 1, r(2, "b"), r(3, nil))
	add(t, tbl, mem, 4, r(4, "d"))
	s, err := tbl.Since(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	parts := s.Parts()
	if len(parts) != 2 || parts[0].Epoch != 1 || parts[1].Epoch != 4 || !parts[0].CommitTime.Equal(commitTime(2)) {
		t.Fatalf("parts: %+v", parts)
	}
	recs, err := s.RecordsWithEpoch(mem)
	if err != nil {
		t.Fatal(err)
	}
	want := []vt.Row{
		r(2, "b", 1, commitTime(2).UnixMicro()),
		r(3, nil, 1, commitTime(2).UnixMicro()),
		r(4, "d", 4, commitTime(3).UnixMicro()),
	}
	checkOrdered(t, "RecordsWithEpoch", want, vt.RowsOf(recs...))
	wantSchema := memsink.WithEpochSchema(kv)
	for _, rec := range recs {
		if !rec.Schema().Equal(wantSchema) {
			t.Errorf("schema %s, want %s", rec.Schema(), wantSchema)
		}
		if rec.Column(0) != s.Records()[0].Column(0) && rec.Column(0) != s.Records()[1].Column(0) {
			t.Errorf("table columns were copied")
		}
		rec.Release()
	}
}

func TestLatestBatchDataEmptyTable(t *testing.T) {
	mem := vt.NewAllocator(t)
	tbl := newTable(t, mem, arrowstream.SinkInfo{Mode: arrowstream.Append}, memsink.Options{})
	s := tbl.LatestBatchData()
	if s.LatestEpoch() != -1 || s.NumRows() != 0 || len(s.Records()) != 0 {
		t.Errorf("empty table: latest %d, %d rows", s.LatestEpoch(), s.NumRows())
	}
	s.Release()
	s.Release() // idempotent
	if _, err := tbl.AsOf(0); !errors.Is(err, memsink.ErrNotRetained) || !strings.Contains(err.Error(), "no epoch committed yet") {
		t.Errorf("AsOf on an empty table: %v", err)
	}
	if len(tbl.History()) != 0 {
		t.Errorf("History of an empty table: %v", tbl.History())
	}
}
