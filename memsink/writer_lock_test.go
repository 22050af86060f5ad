package memsink_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// lockedQuery is a session running "out" (value*10 of "input") into a
// persisted memory table on one checkpoint.
type lockedQuery struct {
	s   *arrowstream.Session
	cat *memsink.Catalog
	src *arrowstream.MemoryStream
}

func newLockedQuery(t *testing.T, mem *poisonmem.Allocator) *lockedQuery {
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem})
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{Persist: true, Writer: &checkpoint.Writer{NoSync: true}, Logger: quiet})
	src := arrowstream.NewMemoryStream(mem, intSchema)
	s.RegisterStream("input", src)
	return &lockedQuery{s: s, cat: cat, src: src}
}

func (l *lockedQuery) start(ctx context.Context, dir string) (*arrowstream.StreamingQuery, error) {
	return l.s.ReadStream("input").Select("value * 10 AS v").WriteStream().Format("memory").QueryName("out").
		Option("checkpointLocation", dir).Start(ctx)
}

func (l *lockedQuery) close() {
	if tbl, ok := l.cat.Drop("out"); ok {
		tbl.Close()
	}
	l.src.Close()
}

// feed adds values and waits until the query has processed them.
func feed(t *testing.T, ctx context.Context, q *arrowstream.StreamingQuery, src *arrowstream.MemoryStream, vals ...int64) {
	t.Helper()
	for _, v := range vals {
		if _, err := src.AddData([]any{v}); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// filesUnder returns every regular file under dir with its bytes.
func filesUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A second start on a checkpoint that a running query holds is refused
// before it modifies anything: the sink's recovery would otherwise cut
// what looks like a torn tail of its log (the live writer's append in
// flight) and delete files outside its recovered chain (ones the live
// writer has not linked yet). The running query then goes on, exactly;
// once it stops, a start recovers its table.
func TestSecondStartOnHeldCheckpointChangesNothing(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()

	first := newLockedQuery(t, mem)
	defer first.close()
	q, err := first.start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	feed(t, ctx, q, first.src, 1, 2, 3)

	// What the live writer's in-flight work looks like to a recovery: a
	// partial record after the newest segment's last whole one, and an
	// epoch file that no record of the chain names.
	sinkDir := filepath.Join(dir, memsink.SinkDir)
	segs, err := filepath.Glob(filepath.Join(sinkDir, "*.seg"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no sink log segment in %s (%v)", sinkDir, err)
	}
	newest := segs[len(segs)-1]
	for _, s := range segs {
		if len(s) > len(newest) || len(s) == len(newest) && s > newest {
			newest = s
		}
	}
	st, err := os.Stat(newest)
	if err != nil {
		t.Fatal(err)
	}
	whole := st.Size()
	// An append cut short: the head of a whole record (its frame says
	// more bytes follow than the file has), as the live writer's next
	// append looks while it is being written.
	data, err := os.ReadFile(newest)
	if err != nil || len(data) < 48 {
		t.Fatalf("%s: %d bytes (%v)", newest, len(data), err)
	}
	f, err := os.OpenFile(newest, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data[8:48]); err != nil { // after the 8-byte segment header
		t.Fatal(err)
	}
	f.Close()
	unlinked := filepath.Join(sinkDir, "0.arrow")
	if err := os.WriteFile(unlinked, []byte("a file the live writer has not linked yet"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := filesUnder(t, dir)

	second := newLockedQuery(t, mem)
	defer second.close()
	q2, err := second.start(ctx, dir)
	after := filesUnder(t, dir)
	if err == nil {
		q2.Stop()
		t.Error("a second start on a held checkpoint was not refused")
	} else if !errors.Is(err, checkpoint.ErrInUse) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "pid ") ||
		!strings.Contains(err.Error(), `"out"`) {
		t.Errorf("refusal %q: want checkpoint.ErrInUse naming %s and its holder (pid, query \"out\")", err, dir)
	}
	for path, b := range before {
		if a, ok := after[path]; !ok {
			t.Errorf("the refused start deleted %s", path)
		} else if a != b {
			t.Errorf("the refused start changed %s (%d bytes, was %d)", path, len(a), len(b))
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Errorf("the refused start created %s", path)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// The in-flight work "completes" as the live writer's would: the
	// test's stand-ins go, and the query appends after its last record.
	if err := os.Truncate(newest, whole); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(unlinked); err != nil {
		t.Fatal(err)
	}
	if !q.IsActive() {
		t.Fatalf("the running query stopped: %v", q.Exception())
	}
	feed(t, ctx, q, first.src, 4, 5)
	want := []vt.Row{{int64(10)}, {int64(20)}, {int64(30)}, {int64(40)}, {int64(50)}}
	tbl, ok := first.cat.Lookup("out")
	if !ok {
		t.Fatal("no table out")
	}
	checkRows(t, "the running query's table", want, rowsOf(tbl.AllData()))
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}

	// Stopped, the checkpoint is free: a start recovers the table.
	q3, err := second.start(ctx, dir)
	if err != nil {
		t.Fatalf("start after the holder stopped: %v", err)
	}
	defer q3.Stop()
	again, ok := second.cat.Lookup("out")
	if !ok {
		t.Fatal("no table out after the restart")
	}
	checkRows(t, "the restarted query's table", want, rowsOf(again.AllData()))
	if err := q3.Stop(); err != nil {
		t.Fatal(err)
	}
}
