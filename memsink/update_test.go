package memsink_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var grouped = arrow.NewSchema([]arrow.Field{
	{Name: "g", Type: vector.String, Nullable: true},
	{Name: "h", Type: vector.Int32, Nullable: true},
	{Name: "n", Type: vector.Int64},
}, nil)

func TestViewSemantics(t *testing.T) {
	type vstep struct {
		epoch      int64
		rows       []vt.Row
		wantView   []vt.Row // multiset
		wantLatest []vt.Row // LatestBatchData
	}
	cases := []struct {
		name   string
		schema *arrow.Schema
		keys   []string
		steps  []vstep
		since  int64
		// wantSince is Since(since) after the last step.
		wantSince []vt.Row
	}{
		{
			name: "fixed key", schema: kv, keys: []string{"K"}, // case-insensitive
			steps: []vstep{
				{0, []vt.Row{r(1, "a"), r(2, "b")}, []vt.Row{r(1, "a"), r(2, "b")}, []vt.Row{r(1, "a"), r(2, "b")}},
				{1, []vt.Row{r(1, "c")}, []vt.Row{r(1, "c"), r(2, "b")}, []vt.Row{r(1, "c")}},
				{2, []vt.Row{r(3, "d"), r(3, "e"), r(0, "z")}, []vt.Row{r(1, "c"), r(2, "b"), r(3, "e"), r(0, "z")}, []vt.Row{r(3, "e"), r(0, "z")}},
				{3, []vt.Row{r(nil, "x"), r(0, "y")}, []vt.Row{r(1, "c"), r(2, "b"), r(3, "e"), r(0, "y"), r(nil, "x")}, []vt.Row{r(nil, "x"), r(0, "y")}},
				{4, []vt.Row{r(nil, "w")}, []vt.Row{r(1, "c"), r(2, "b"), r(3, "e"), r(0, "y"), r(nil, "w")}, []vt.Row{r(nil, "w")}},
				{3, []vt.Row{r(1, "replayed")}, []vt.Row{r(1, "c"), r(2, "b"), r(3, "e"), r(0, "y"), r(nil, "w")}, []vt.Row{r(nil, "w")}},
				{5, nil, []vt.Row{r(1, "c"), r(2, "b"), r(3, "e"), r(0, "y"), r(nil, "w")}, nil},
			},
			since:     1,
			wantSince: []vt.Row{r(3, "e"), r(0, "y"), r(nil, "w")},
		},
		{
			name: "composite key with strings and nulls", schema: grouped, keys: []string{"g", "h"},
			steps: []vstep{
				{0, []vt.Row{r("a", 1, 10), r("a", 2, 20), r(nil, 1, 30), r("a", nil, 40)},
					[]vt.Row{r("a", 1, 10), r("a", 2, 20), r(nil, 1, 30), r("a", nil, 40)}, nil},
				{1, []vt.Row{r("a", 1, 11), r(nil, 1, 31), r("b", 1, 50)},
					[]vt.Row{r("a", 1, 11), r("a", 2, 20), r(nil, 1, 31), r("a", nil, 40), r("b", 1, 50)}, []vt.Row{r("a", 1, 11), r(nil, 1, 31), r("b", 1, 50)}},
				{2, []vt.Row{r("a", nil, 41), r("", 1, 60)},
					[]vt.Row{r("a", 1, 11), r("a", 2, 20), r(nil, 1, 31), r("a", nil, 41), r("b", 1, 50), r("", 1, 60)}, []vt.Row{r("a", nil, 41), r("", 1, 60)}},
			},
			since:     0,
			wantSince: []vt.Row{r("a", 1, 11), r(nil, 1, 31), r("b", 1, 50), r("a", nil, 41), r("", 1, 60)},
		},
	}
	for _, c := range cases {
		for _, shape := range vt.Shapes {
			t.Run(c.name+"/"+shape.String(), func(t *testing.T) {
				mem := vt.NewAllocator(t)
				info := arrowstream.SinkInfo{QueryName: "view", Schema: c.schema, Mode: arrowstream.Update, KeyColumns: c.keys}
				tbl := newTable(t, mem, info, memsink.Options{UpdateAsView: true})
				for _, s := range c.steps {
					if err := tbl.AddBatch(t.Context(), s.epoch, op(t, mem, c.schema, s.rows, shape)); err != nil {
						t.Fatal(err)
					}
					checkRows(t, fmt.Sprintf("view after epoch %d", s.epoch), s.wantView, rowsOf(tbl.Snapshot()))
					if s.wantLatest != nil {
						checkRows(t, fmt.Sprintf("latest batch after epoch %d", s.epoch), s.wantLatest, rowsOf(tbl.LatestBatchData()))
					}
				}
				s, err := tbl.Since(c.since)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, "since", c.wantSince, rowsOf(s))
			})
		}
	}
}

// model is the expected content of a view keyed by column 0.
type model map[int64]vt.Row

func (m model) rows() []vt.Row {
	out := make([]vt.Row, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	return out
}

// TestViewCompaction drives a view through both compaction triggers and
// checks content, size, held snapshots and the per-row epochs.
func TestViewCompaction(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{QueryName: "view", Schema: kv, Mode: arrowstream.Update, KeyColumns: []string{"k"}}
	tbl := newTable(t, mem, info, memsink.Options{UpdateAsView: true})
	m := model{}
	epoch := int64(0)
	commit := func(rows []vt.Row) {
		t.Helper()
		add(t, tbl, mem, epoch, rows...)
		for _, row := range rows {
			m[row[0].(int64)] = row
		}
		epoch++
	}
	// A full chunk, then many small epochs of new keys: small chunks pile
	// up and get merged.
	var big []vt.Row
	for k := int64(0); k < memsink.MaxRecordRows+100; k++ {
		big = append(big, r(k, "v0"))
	}
	commit(big)
	if sz := tbl.Size(); sz.Records != 2 || sz.DeadRows != 0 {
		t.Fatalf("after the first epoch: %+v", sz)
	}
	held := tbl.Snapshot()
	heldRows := vt.RowsOf(held.Records()...)
	for i := 0; i < 40; i++ {
		var rows []vt.Row
		for j := 0; j < 10; j++ {
			k := int64(1_000_000 + i*10 + j)
			rows = append(rows, r(k, fmt.Sprintf("small%d", i)))
		}
		commit(rows)
	}
	sz := tbl.Size()
	if sz.Records > 2+16 {
		t.Errorf("small chunks not merged: %+v", sz)
	}
	checkRows(t, "after small epochs", m.rows(), rowsOf(tbl.Snapshot()))
	// Now update most keys of the big chunk, a third at a time: dead rows
	// pass half of the rows and compaction rewrites the chunks.
	third := len(big) / 3
	for round := 0; round < 3; round++ {
		var rows []vt.Row
		for k := round * third; k < (round+1)*third; k++ {
			rows = append(rows, r(int64(k), fmt.Sprintf("v%d", round+1)))
		}
		commit(rows)
		sz := tbl.Size()
		if sz.DeadRows*2 > sz.Rows {
			t.Errorf("round %d: more than half of the held rows are dead: %+v", round, sz)
		}
		checkRows(t, fmt.Sprintf("after update round %d", round), m.rows(), rowsOf(tbl.Snapshot()))
	}
	if s := tbl.Snapshot(); s.NumRows() != int64(len(m)) {
		t.Errorf("snapshot has %d rows, want %d keys", s.NumRows(), len(m))
		s.Release()
	} else {
		// Per-row epochs are kept through compaction.
		recs, err := s.RecordsWithEpoch(mem)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range vt.RowsOf(recs...) {
			k, e, v := row[0].(int64), row[2].(int64), row[1].(string)
			var want int64
			switch {
			case k >= 1_000_000:
				want = 1 + (k-1_000_000)/10
			case v == "v0":
				want = 0
			default:
				want = 41 + int64(v[1]-'1')
			}
			if e != want {
				t.Fatalf("key %d (%s): _epoch %d, want %d", k, v, e, want)
			}
		}
		releaseAll(recs)
		s.Release()
	}
	// Since after compaction: chunks mix epochs, rows are filtered.
	for _, since := range []int64{0, 40, 41, 42, 43} {
		var want []vt.Row
		s, err := tbl.DataSinceBatch(since)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.RecordsWithEpoch(mem)
		if err != nil {
			t.Fatal(err)
		}
		all := rowsOf(tbl.Snapshot())
		withEpochs := vt.RowsOf(recs...)
		releaseAll(recs)
		for _, row := range withEpochs {
			if row[2].(int64) <= since {
				t.Fatalf("since %d: row %v", since, row)
			}
		}
		got := rowsOf(s)
		// Every key whose latest row came after since, no other.
		s2 := tbl.Snapshot()
		recs2, _ := s2.RecordsWithEpoch(mem)
		for _, row := range vt.RowsOf(recs2...) {
			if row[2].(int64) > since {
				want = append(want, row[:2])
			}
		}
		releaseAll(recs2)
		s2.Release()
		checkRows(t, fmt.Sprintf("since %d", since), want, got)
		if len(all) != len(m) {
			t.Fatalf("view has %d rows, want %d", len(all), len(m))
		}
	}
	// The snapshot taken before all of this still reads the first epoch.
	checkRows(t, "held snapshot", heldRows, rowsOf(held))
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

func TestViewTimeTravel(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{QueryName: "view", Schema: kv, Mode: arrowstream.Update, KeyColumns: []string{"k"}}
	tbl := newTable(t, mem, info, memsink.Options{UpdateAsView: true, MaxEpochs: 3})
	add(t, tbl, mem, 0, r(1, "a"), r(2, "a"))
	add(t, tbl, mem, 1, r(1, "b"))
	add(t, tbl, mem, 2, r(2, "c"))
	add(t, tbl, mem, 3, r(1, "d"), r(3, "d"))
	want := map[int64][]vt.Row{
		1: {r(1, "b"), r(2, "a")},
		2: {r(1, "b"), r(2, "c")},
		3: {r(1, "d"), r(2, "c"), r(3, "d")},
	}
	for e, rows := range want {
		s, err := tbl.AsOf(e)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, fmt.Sprintf("as of %d", e), rows, rowsOf(s))
	}
	if _, err := tbl.AsOf(0); err == nil || !strings.Contains(err.Error(), "epoch 0 is not retained (retained epochs 1..3)") {
		t.Errorf("AsOf(0): %v", err)
	}
	var epochs []int64
	for _, h := range tbl.History() {
		epochs = append(epochs, h.Epoch)
	}
	if fmt.Sprint(epochs) != "[1 2 3]" {
		t.Errorf("History epochs %v", epochs)
	}
}

// TestViewCompactionReusesScratch runs compactions of different sizes on
// one view, so that gather's kept row lists serve a smaller compaction
// after a larger one (and the other way round), and checks after every
// epoch that the view holds exactly the model's rows and that later
// upserts of moved keys supersede them (the key numbers a compaction
// hands each new chunk are its own rows', not a previous gather's).
func TestViewCompactionReusesScratch(t *testing.T) {
	mem := vt.NewAllocator(t)
	info := arrowstream.SinkInfo{QueryName: "view", Schema: kv, Mode: arrowstream.Update, KeyColumns: []string{"k"}}
	tbl := newTable(t, mem, info, memsink.Options{UpdateAsView: true})
	m := model{}
	epoch := int64(0)
	commit := func(what string, rows []vt.Row) {
		t.Helper()
		add(t, tbl, mem, epoch, rows...)
		for _, row := range rows {
			m[row[0].(int64)] = row
		}
		epoch++
		checkRows(t, what, m.rows(), rowsOf(tbl.Snapshot()))
	}
	keys := func(lo, hi int64, v string) []vt.Row {
		var rows []vt.Row
		for k := lo; k < hi; k++ {
			rows = append(rows, r(k, v))
		}
		return rows
	}
	// Compactions of a few thousand rows and of a few hundred follow
	// each other; small enough to check the whole view every epoch.
	const n = memsink.MaxRecordRows / 16
	commit("big", keys(0, n, "a"))
	for round := range 3 {
		// Most keys updated: more than half of the rows die and a large
		// compaction moves the rest.
		commit(fmt.Sprintf("round %d large", round), keys(0, n*3/4, fmt.Sprintf("b%d", round)))
		// Small epochs of new keys pile up small chunks: small
		// compactions follow the large one.
		for i := range 40 {
			lo := int64(1_000_000 + round*1000 + i*10)
			commit(fmt.Sprintf("round %d small %d", round, i), keys(lo, lo+10, fmt.Sprintf("s%d.%d", round, i)))
		}
		// Keys the compactions moved, updated again.
		commit(fmt.Sprintf("round %d moved", round), keys(n*3/4, n, fmt.Sprintf("c%d", round)))
	}
	if sz := tbl.Size(); sz.Rows-sz.DeadRows != int64(len(m)) {
		t.Errorf("view holds %d live rows, want %d keys: %+v", sz.Rows-sz.DeadRows, len(m), sz)
	}
}
