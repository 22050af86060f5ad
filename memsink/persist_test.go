package memsink_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func persistOpts(o memsink.Options) memsink.Options {
	o.Persist = true
	o.Writer = &checkpoint.Writer{NoSync: true}
	o.Now = clock()
	o.Logger = quiet
	return o
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func sinkFiles(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, memsink.SinkDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// tableState is what a restarted table must reproduce.
type tableState struct {
	rows    []vt.Row
	latest  int64
	history []memsink.EpochInfo
}

func stateOf(tbl *memsink.Table) tableState {
	h := tbl.History()
	for i := range h {
		h[i].Bytes = 0 // decoded buffers are laid out differently
	}
	return tableState{rows: rowsOf(tbl.AllData()), latest: tbl.LatestEpoch(), history: h}
}

func TestPersistRoundTrip(t *testing.T) {
	viewInfo := arrowstream.SinkInfo{Mode: arrowstream.Update, KeyColumns: []string{"k"}}
	// Enough rows over few keys that a view snapshot file gets written.
	var heavy []vt.Row
	for i := 0; i < 40_000; i++ {
		heavy = append(heavy, r(i%500, fmt.Sprintf("h%d", i)))
	}
	cases := []struct {
		name      string
		info      arrowstream.SinkInfo
		opts      memsink.Options
		epochs    [][]vt.Row // epoch ids 0, 2, 4, ...
		ordered   bool
		wantChain string
		// after restart: epoch 2*len(epochs) adds these rows
		next     []vt.Row
		wantNext []vt.Row
	}{
		{
			name: "append", info: arrowstream.SinkInfo{Mode: arrowstream.Append},
			epochs:    [][]vt.Row{{r(1, "a"), r(2, nil)}, {}, {r(3, "c")}},
			ordered:   true,
			wantChain: "[0.arrow 2.arrow 4.arrow]",
			next:      []vt.Row{r(4, "d")},
			wantNext:  []vt.Row{r(1, "a"), r(2, nil), r(3, "c"), r(4, "d")},
		},
		{
			name: "append with retention", info: arrowstream.SinkInfo{Mode: arrowstream.Append}, opts: memsink.Options{MaxEpochs: 2},
			epochs:    [][]vt.Row{{r(1, "a")}, {r(2, "b")}, {r(3, "c")}},
			ordered:   true,
			wantChain: "[2.arrow 4.arrow]",
			next:      []vt.Row{r(4, "d")},
			wantNext:  []vt.Row{r(3, "c"), r(4, "d")},
		},
		{
			name: "complete", info: arrowstream.SinkInfo{Mode: arrowstream.Complete},
			epochs:    [][]vt.Row{{r(1, "a")}, {r(1, "b"), r(2, "b")}, {r(1, "c")}},
			ordered:   true,
			wantChain: "[4.arrow]",
			next:      []vt.Row{r(9, "z")},
			wantNext:  []vt.Row{r(9, "z")},
		},
		{
			name: "complete with history", info: arrowstream.SinkInfo{Mode: arrowstream.Complete}, opts: memsink.Options{MaxEpochs: 2},
			epochs:    [][]vt.Row{{r(1, "a")}, {r(1, "b"), r(2, "b")}, {r(1, "c")}},
			ordered:   true,
			wantChain: "[2.arrow 4.arrow]",
			next:      []vt.Row{r(9, "z")},
			wantNext:  []vt.Row{r(9, "z")},
		},
		{
			name: "view", info: viewInfo, opts: memsink.Options{UpdateAsView: true},
			epochs:    [][]vt.Row{{r(1, "a"), r(2, "a")}, {r(1, "b")}, {}},
			wantChain: "[0.arrow 2.arrow 4.arrow]",
			next:      []vt.Row{r(2, "c"), r(3, "c")},
			wantNext:  []vt.Row{r(1, "b"), r(2, "c"), r(3, "c")},
		},
		{
			name: "view with snapshot file", info: viewInfo, opts: memsink.Options{UpdateAsView: true, MaxEpochs: 2},
			epochs:    [][]vt.Row{{r(1, "a"), r(2000, "a")}, heavy, heavy[:30_000], {r(1, "z")}},
			wantChain: "[4.view.arrow 6.arrow]",
			next:      []vt.Row{r(2000, "y")},
		},
	}
	// legacy: the epochs written are rewritten as the per-epoch files of
	// earlier builds before the restart, which then continues the
	// directory with log segments (a mixed directory, read by the second
	// restart).
	for _, legacy := range []bool{false, true} {
		for _, c := range cases {
			name := c.name
			if legacy {
				name += "/legacy files"
			}
			t.Run(name, func(t *testing.T) {
				mem := vt.NewAllocator(t)
				dir := t.TempDir()
				info := c.info
				info.QueryName, info.Schema, info.CheckpointDir = "q", kv, dir
				tbl := newTable(t, mem, info, persistOpts(c.opts))
				for i, rows := range c.epochs {
					add(t, tbl, mem, int64(2*i), rows...)
				}
				if got := fmt.Sprint(tbl.ChainForTest()); got != c.wantChain {
					t.Errorf("chain %s, want %s", got, c.wantChain)
				}
				if got := fmt.Sprint(sinkFiles(t, dir)); got != "[0.seg]" {
					t.Errorf("files %s, want one log segment", got)
				}
				before := stateOf(tbl)
				tbl.Close()
				if legacy {
					memsink.ToLegacyFiles(t, dir)
				}

				// Restart: a new table over the same directory.
				again := newTable(t, mem, info, persistOpts(c.opts))
				after := stateOf(again)
				if c.ordered {
					checkOrdered(t, "rows after restart", before.rows, after.rows)
				} else {
					checkRows(t, "rows after restart", before.rows, after.rows)
				}
				if after.latest != before.latest || fmt.Sprint(after.history) != fmt.Sprint(before.history) {
					t.Errorf("after restart: latest %d, history %v; before: %d, %v", after.latest, after.history, before.latest, before.history)
				}
				// The engine re-runs the last epoch: ignored. Then it moves on.
				last := int64(2 * (len(c.epochs) - 1))
				add(t, again, mem, last, r(666, "replayed"))
				add(t, again, mem, last+2, c.next...)
				if c.wantNext != nil {
					got := rowsOf(again.AllData())
					if c.ordered {
						checkOrdered(t, "after the next epoch", c.wantNext, got)
					} else {
						checkRows(t, "after the next epoch", c.wantNext, got)
					}
				}
				// A second restart sees the new epoch too.
				want := stateOf(again)
				again.Close()
				third := newTable(t, mem, info, persistOpts(c.opts))
				if got := stateOf(third); got.latest != last+2 || len(got.rows) != len(want.rows) {
					t.Errorf("second restart: latest %d with %d rows, want %d with %d", got.latest, len(got.rows), last+2, len(want.rows))
				}
				third.Close()
			})
		}
	}
}

// TestPersistDamage: a damaged or missing per-epoch file (as earlier
// builds wrote, still read) fails recovery with an error naming it;
// nothing is silently dropped. The log's damage cases are in
// sinklog_test.go.
func TestPersistDamage(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		wantErr string // the error must also name the file
		file    string
		corrupt bool
	}{
		{"truncated", func(t *testing.T, dir string) { truncate(t, dir, "2.arrow", 0.5) }, "missing trailer (truncated?)", "2.arrow", true},
		{"truncated trailer", func(t *testing.T, dir string) { truncate(t, dir, "2.arrow", 0.999) }, "missing trailer", "2.arrow", true},
		{"empty", func(t *testing.T, dir string) { truncate(t, dir, "1.arrow", 0) }, "missing trailer", "1.arrow", true},
		{"flipped byte", func(t *testing.T, dir string) { flip(t, dir, "1.arrow") }, "checksum mismatch", "1.arrow", true},
		{"missing middle epoch", func(t *testing.T, dir string) { remove(t, dir, "1.arrow") }, "1.arrow is missing: 2.arrow names epoch 1 as its predecessor and the table's files start at 0.arrow", "1.arrow", true},
		{"missing first epoch", func(t *testing.T, dir string) { remove(t, dir, "0.arrow") }, "0.arrow is missing", "0.arrow", true},
		{"file renamed", func(t *testing.T, dir string) { rename(t, dir, "1.arrow", "7.arrow") }, "metadata says epoch 1", "7.arrow", true},
		{"schema changed", func(t *testing.T, dir string) {}, "persisted rows do not fit the query: input has columns (k bigint, v string), table has (k bigint)", "2.arrow", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: dir}
			tbl := newTable(t, mem, info, persistOpts(memsink.Options{}))
			for e := int64(0); e < 3; e++ {
				add(t, tbl, mem, e, epochRows(e, 5)...)
			}
			tbl.Close()
			memsink.ToLegacyFiles(t, dir)
			c.damage(t, dir)
			if c.name == "schema changed" {
				info.Schema = memsinkOneColumn
			}
			_, err := memsink.New(mem, info, persistOpts(memsink.Options{}))
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), filepath.Join(dir, memsink.SinkDir, c.file)) {
				t.Fatalf("want an error naming %s with %q, got %v", c.file, c.wantErr, err)
			}
			if errors.Is(err, checkpoint.ErrCorrupt) != c.corrupt {
				t.Errorf("errors.Is(err, ErrCorrupt) = %v, want %v", !c.corrupt, c.corrupt)
			}
		})
	}
}

var memsinkOneColumn = arrow.NewSchema(kv.Fields()[:1], nil)

func sinkPath(dir, name string) string { return filepath.Join(dir, memsink.SinkDir, name) }

func truncate(t *testing.T, dir, name string, keep float64) {
	raw, err := os.ReadFile(sinkPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sinkPath(dir, name), raw[:int(float64(len(raw))*keep)], 0o644); err != nil {
		t.Fatal(err)
	}
}

func flip(t *testing.T, dir, name string) {
	raw, err := os.ReadFile(sinkPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x40
	if err := os.WriteFile(sinkPath(dir, name), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir, name string) {
	if err := os.Remove(sinkPath(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func rename(t *testing.T, dir, from, to string) {
	if err := os.Rename(sinkPath(dir, from), sinkPath(dir, to)); err != nil {
		t.Fatal(err)
	}
}

// TestPersistWriteFailure: a failed durable write fails the epoch and
// leaves the table and the directory unchanged; the retry succeeds.
func TestPersistWriteFailure(t *testing.T) {
	// An append to the log passes these steps (it syncs no directory).
	for _, step := range []checkpoint.WriteStep{checkpoint.BeforeTempWrite, checkpoint.AfterTempWrite, checkpoint.AfterRename} {
		t.Run(step.String(), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: dir}
			fail := false
			opts := persistOpts(memsink.Options{})
			opts.Writer.Hook = func(s checkpoint.WriteStep, path string) error {
				if fail && s == step {
					return errors.New("disk on fire")
				}
				return nil
			}
			tbl := newTable(t, mem, info, opts)
			add(t, tbl, mem, 0, r(1, "a"))
			before := logBytes(t, dir)
			fail = true
			err := tbl.AddBatch(context.Background(), 1, op(t, mem, kv, []vt.Row{r(2, "b")}, vt.Shape{}))
			if err == nil || !strings.Contains(err.Error(), "persist epoch 1") || !strings.Contains(err.Error(), "disk on fire") {
				t.Fatalf("want a persist error, got %v", err)
			}
			if tbl.LatestEpoch() != 0 || fmt.Sprint(tbl.ChainForTest()) != "[0.arrow]" || logBytes(t, dir) != before {
				t.Fatalf("after the failure: latest %d, chain %v, log of %d bytes (%d before)", tbl.LatestEpoch(), tbl.ChainForTest(), logBytes(t, dir), before)
			}
			fail = false
			add(t, tbl, mem, 1, r(3, "c"))
			tbl.Close()
			again := newTable(t, mem, info, opts)
			checkOrdered(t, "after restart", []vt.Row{r(1, "a"), r(3, "c")}, rowsOf(again.AllData()))
		})
	}
}

// TestRecoveryDeletesLeftovers: per-epoch files outside the chain (a superseded
// Complete result a crash left behind, an uncommitted write) are removed.
// A temp file of an interrupted write is not: recovery runs before the
// query holds the checkpoint's lock, when it may be a live writer's; the
// query removes it once it holds the lock (checkpoint.RemoveStaleTemps).
func TestRecoveryDeletesLeftovers(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Complete, CheckpointDir: dir}
	tbl := newTable(t, mem, info, persistOpts(memsink.Options{MaxEpochs: 5}))
	for e := int64(0); e < 3; e++ {
		add(t, tbl, mem, e, epochRows(e, 2)...)
	}
	tbl.Close()
	memsink.ToLegacyFiles(t, dir)
	if err := os.WriteFile(sinkPath(dir, ".3.arrow.0123456789abcdef.tmp"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Reopen with a smaller history: the oldest results are evicted.
	again := newTable(t, mem, info, persistOpts(memsink.Options{MaxEpochs: 2}))
	if got := fmt.Sprint(sinkFiles(t, dir)); got != "[.3.arrow.0123456789abcdef.tmp 1.arrow 2.arrow]" {
		t.Errorf("files %s", got)
	}
	checkOrdered(t, "rows", epochRows(2, 2), rowsOf(again.AllData()))
}

func TestCanRecover(t *testing.T) {
	dir := t.TempDir()
	offsets := filepath.Join(dir, "offsets")
	fresh := t.TempDir()
	if err := os.Mkdir(offsets, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir     string
		mode    arrowstream.OutputMode
		persist bool
		wantErr bool
	}{
		{fresh, arrowstream.Append, false, false},
		{dir, arrowstream.Complete, false, false},
		{dir, arrowstream.Append, false, true},
		{dir, arrowstream.Update, false, true},
		{dir, arrowstream.Append, true, true}, // offsets but no sink files
	}
	for _, c := range cases {
		err := memsink.CanRecover(c.dir, c.mode, c.persist)
		if !c.wantErr {
			if err != nil {
				t.Errorf("%s %s persist=%v: %v", c.dir, c.mode, c.persist, err)
			}
			continue
		}
		var nr *memsink.NotRecoverableError
		want := "This query does not support recovering from checkpoint location. Delete " + offsets + " to start over."
		if !errors.As(err, &nr) || err.Error() != want {
			t.Errorf("%s persist=%v: got %v, want %q", c.mode, c.persist, err, want)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, memsink.SinkDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := memsink.CanRecover(dir, arrowstream.Append, true); err != nil {
		t.Errorf("persisted append: %v", err)
	}
}

// rich has a column of every kind the validator knows.
var rich = arrow.NewSchema([]arrow.Field{
	{Name: "b", Type: vector.Boolean, Nullable: true},
	{Name: "i", Type: vector.Int32, Nullable: true},
	{Name: "x", Type: vector.Float64, Nullable: true},
	{Name: "ts", Type: vector.Timestamp, Nullable: true},
	{Name: "d", Type: vector.Date, Nullable: true},
	{Name: "dec", Type: vector.Decimal(10, 2), Nullable: true},
	{Name: "bin", Type: vector.Binary, Nullable: true},
	{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}, Nullable: true},
	{Name: "list", Type: vector.ListOf(vector.Int64), Nullable: true},
	{Name: "w", Type: vector.WindowType, Nullable: true},
}, nil)

func TestPersistTypes(t *testing.T) {
	rows := []vt.Row{
		r(true, 1, 1.5, int64(1_700_000_000_000_000), 19000, "12.34", []byte{0, 1}, "red", []any{int64(1), nil, int64(3)}, []any{int64(10), int64(20)}),
		r(nil, nil, nil, nil, nil, nil, nil, nil, nil, nil),
		r(false, -7, -0.0, int64(0), -1, "-0.01", []byte{}, "blue", []any{}, []any{nil, int64(5)}),
		r(true, 2, 2.5, int64(5), 3, "1.00", []byte("x"), "red", []any{int64(4)}, []any{int64(1), nil}),
	}
	for _, shape := range []vt.Shape{{BatchSize: 1024}, {BatchSize: 3, Sliced: true}, {BatchSize: 1024, GarbageUnderNulls: true, BitmapWithoutNulls: true}} {
		t.Run(shape.String(), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			info := arrowstream.SinkInfo{QueryName: "q", Schema: rich, Mode: arrowstream.Append, CheckpointDir: dir}
			tbl := newTable(t, mem, info, persistOpts(memsink.Options{}))
			if err := tbl.AddBatch(context.Background(), 0, op(t, mem, rich, rows, shape)); err != nil {
				t.Fatal(err)
			}
			tbl.Close()
			again := newTable(t, mem, info, persistOpts(memsink.Options{}))
			checkOrdered(t, "rich rows after restart", rows, rowsOf(again.AllData()))
		})
	}
}

func TestPersistUnsupportedType(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "f", Type: arrow.FixedWidthTypes.Float16}, {Name: "u", Type: arrow.DenseUnionOf(nil, nil)}}, nil)
	_, err := memsink.New(mem, arrowstream.SinkInfo{QueryName: "q", Schema: schema, CheckpointDir: t.TempDir()}, persistOpts(memsink.Options{}))
	if err == nil || !strings.Contains(err.Error(), "column u cannot be persisted") {
		t.Errorf("want an unsupported-type error for column u, got %v", err)
	}
}

func TestPersistClear(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: dir}
	tbl := newTable(t, mem, info, persistOpts(memsink.Options{}))
	add(t, tbl, mem, 0, r(1, "a"))
	add(t, tbl, mem, 1, r(2, "b"))
	if err := tbl.Clear(); err != nil {
		t.Fatal(err)
	}
	if files := sinkFiles(t, dir); len(files) != 0 {
		t.Errorf("files after Clear: %v", files)
	}
	add(t, tbl, mem, 0, r(3, "c"))
	tbl.Close()
	again := newTable(t, mem, info, persistOpts(memsink.Options{}))
	checkOrdered(t, "after Clear and restart", []vt.Row{r(3, "c")}, rowsOf(again.AllData()))
}

// logBytes is the total size of the log segments in dir's sink directory.
func logBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	for _, f := range sinkFiles(t, dir) {
		if strings.HasSuffix(f, ".seg") {
			st, err := os.Stat(sinkPath(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			n += st.Size()
		}
	}
	return n
}
