package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// genSchema is the schema of genSource: value i, key i % 7, event time i+1
// seconds.
var genSchema = arrow.NewSchema([]arrow.Field{
	{Name: "value", Type: arrow.PrimitiveTypes.Int64},
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
}, nil)

// genSource is a deterministic replayable source: rows [0, limit) where the
// test raises limit. Offsets are {"n":end}; Read(start, end] returns the
// same rows in every process, so restarts of a checkpoint replay exactly.
type genSource struct {
	mem   memory.Allocator
	mu    sync.Mutex
	limit int64
	// dupEvery repeats every value divisible by it (dedup input); 0: none.
	dupEvery int64
	// csvDir, when set, makes the fixture read "events" with the file
	// source (csv: value,k) from this directory instead: each limit l
	// writes a file of the rows [l-csvStep, l), if not there yet.
	csvDir  string
	csvStep int64
}

var csvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "value", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// writeCSV writes the file of limit l atomically.
func (g *genSource) writeCSV(l int64) error {
	name := filepath.Join(g.csvDir, fmt.Sprintf("rows-%06d.csv", l))
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	var b strings.Builder
	for v := l - g.csvStep; v < l; v++ {
		fmt.Fprintf(&b, "%d,%d\n", v, v%7)
	}
	tmp := filepath.Join(g.csvDir, ".tmp-"+filepath.Base(name))
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

type genOffset struct {
	N int64 `json:"n"`
}

func (g *genSource) setLimit(n int64) {
	g.mu.Lock()
	g.limit = n
	g.mu.Unlock()
}

func (g *genSource) Schema() *arrow.Schema { return genSchema }

func (g *genSource) LatestOffset(context.Context) (arrowstream.Offset, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.limit == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(genOffset{g.limit})
	return b, nil
}

func decodeGen(o arrowstream.Offset) (int64, error) {
	if o == nil {
		return 0, nil
	}
	var x genOffset
	if err := json.Unmarshal(o, &x); err != nil {
		return 0, fmt.Errorf("gen offset %s: %w", o, err)
	}
	return x.N, nil
}

func (g *genSource) Read(_ context.Context, start, end arrowstream.Offset) (vector.Operator, error) {
	s, err := decodeGen(start)
	if err != nil {
		return nil, err
	}
	e, err := decodeGen(end)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(g.mem, genSchema)
	defer b.Release()
	for i := s; i < e; i++ {
		n := 1
		if g.dupEvery > 0 && i%g.dupEvery == 0 {
			n = 2
		}
		for ; n > 0; n-- {
			b.Field(0).(*array.Int64Builder).Append(i)
			b.Field(1).(*array.Int64Builder).Append(i % 7)
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp((i + 1) * 1_000_000))
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	return vector.NewScan(genSchema, rec)
}

func (g *genSource) Commit(context.Context, arrowstream.Offset) error { return nil }
func (g *genSource) Close() error                                     { return nil }

// fixtureQuery builds a query's DataFrame over the stream "events".
type fixtureQuery struct {
	name string
	mode arrowstream.OutputMode
	view bool // Update mode as a materialized view
	// second also registers "events2": a second genSource (no duplicates)
	// whose limit follows the first one's.
	second bool
	build  func(s *arrowstream.Session) *arrowstream.DataFrame
	// logFormat is the offset and commit log format of a new checkpoint
	// (SessionOptions.CheckpointLogFormat: 0 for the newest).
	logFormat int
	// snapFiles writes each state partition's snapshots into files of its
	// own, as builds before snapshot packs did
	// (checkpoint.StoreOptions.PartitionSnapshotFiles).
	snapFiles bool
}

// runFixture starts q on the checkpoint dir (memory sink persisted there),
// raises the source's limit through limits, processing everything after
// each, and returns the table's rows sorted as text. An error from
// starting or running the query is returned as is.
func runFixture(t *testing.T, mem memory.Allocator, dir string, q fixtureQuery, src *genSource, limits []int64) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(10*time.Minute)) // a hang, not a slow machine
	defer cancel()
	sess := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: mem, NoSync: true, Logger: quietLogger(), CheckpointLogFormat: q.logFormat,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "2"},
	})
	if q.snapFiles {
		sess.RegisterStateStoreProvider("memory", func(_ map[string]string, w *checkpoint.Writer, mem memory.Allocator) (checkpoint.StateStoreProvider, error) {
			return checkpoint.NewMemoryProvider(w, checkpoint.StoreOptions{Allocator: mem, PartitionSnapshotFiles: true}), nil
		})
	}
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{Persist: true, Logger: quietLogger()})
	defer func() {
		if t, ok := cat.Drop(q.name); ok {
			t.Close()
		}
	}()
	if src.csvDir != "" {
		files.Install(sess)
		if err := sess.RegisterSource("events", "csv", csvSchema, map[string]string{"path": src.csvDir, "maxFilesPerTrigger": "1"}); err != nil {
			return nil, err
		}
	} else {
		sess.RegisterStream("events", src)
	}
	var src2 *genSource
	if q.second {
		src2 = &genSource{mem: mem}
		sess.RegisterStream("events2", src2)
	}
	ws := q.build(sess).WriteStream().Format("memory").QueryName(q.name).OutputMode(q.mode).Option("checkpointLocation", dir)
	if q.view {
		ws.Option("updateAsView", "true")
	}
	query, err := ws.Start(ctx)
	if err != nil {
		return nil, err
	}
	defer query.Stop()
	for _, l := range limits {
		src.setLimit(l)
		if src.csvDir != "" {
			if err := src.writeCSV(l); err != nil {
				return nil, err
			}
		}
		if src2 != nil {
			src2.setLimit(l)
		}
		if err := query.ProcessAllAvailable(ctx); err != nil {
			return nil, err
		}
	}
	if err := query.Stop(); err != nil {
		return nil, err
	}
	tb, ok := cat.Lookup(q.name)
	if !ok {
		return nil, fmt.Errorf("no table %s", q.name)
	}
	snap := tb.Snapshot()
	defer snap.Release()
	var rows []string
	for _, rec := range snap.Records() {
		for i := 0; i < int(rec.NumRows()); i++ {
			var vals []string
			for c := 0; c < int(rec.NumCols()); c++ {
				col := rec.Column(c)
				vals = append(vals, vector.FormatValue(vector.ValueAt(col, i), col.DataType()))
			}
			rows = append(rows, strings.Join(vals, ","))
		}
	}
	sort.Strings(rows)
	return rows, nil
}

// copyDir copies the regular files of the tree src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// steps returns limits from+step, from+2*step, ... up to n of them.
func steps(from, step int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + step*int64(i+1)
	}
	return out
}

// TestFixtureLayout logs the files of a fixture checkpoint (with -v), a
// map for the damage cases.
func TestFixtureLayout(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	rows, err := runFixture(t, mem, dir, damageQuery, &genSource{mem: mem}, steps(0, 50, 12))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("want 7 keys, got %v", rows)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			t.Log(rel)
		}
		return nil
	})
}
