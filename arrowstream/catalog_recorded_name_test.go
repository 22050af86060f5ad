package arrowstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
)

// lockedBuffer is a log destination safe for the queries' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// appendCatalogRecords writes create records to the catalog log under
// root after the ones it holds, as a build that did not check names
// wrote them (the record format of catalog_log.go).
func appendCatalogRecords(t *testing.T, root string, defs ...catalogDef) {
	t.Helper()
	lg, err := checkpoint.OpenLog(catalogDir(root), &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := lg.Epochs()
	if err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	if len(seqs) > 0 {
		next = seqs[len(seqs)-1] + 1
	}
	for _, d := range defs {
		body, err := json.Marshal(map[string]any{"format": 1, "op": "create", "time": "2026-01-02T03:04:05Z",
			"def": map[string]any{"name": d.Name, "kind": d.Kind, "sql": d.SQL}})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := lg.Add(next, body); err != nil || !ok {
			t.Fatalf("catalog record %d: %v, %v", next, ok, err)
		}
		next++
	}
}

// treeOutside lists the paths under parent that are not under root.
func treeOutside(t *testing.T, parent, root string) []string {
	t.Helper()
	rel, _ := filepath.Rel(parent, root)
	var out []string
	for _, p := range treeOf(t, parent) {
		if p != rel && !strings.HasPrefix(p, rel+string(filepath.Separator)) {
			out = append(out, p)
		}
	}
	return out
}

// TestRecordedBadTableNames: a durable catalog written by an earlier build
// records tables whose names cannot name their directory under the
// checkpoint root. Restarting on it restores every other table (a static
// table with its rows, a streaming table that runs, a view recorded after
// the bad names), refuses each bad one with an error, logged, naming it
// and the DROP that removes it; the DROP succeeds and touches no file;
// nothing outside the root is read, written or moved, and a later restart
// is clean. Before, a DROP of `../../../esc` moved a directory outside the
// root into the archive, one of `.` archived every static table's rows,
// one of `..` failed after removing the record, and the restore's error
// did not say what to do.
func TestRecordedBadTableNames(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "a", "root")
	// Directories the bad names resolve to, outside the root: the static
	// table `../../../esc` keeps its rows at <root>/_arrowstream/tables/../../../esc,
	// the streaming table `../esc2` its checkpoint at <root>/../esc2.
	for _, d := range []string{filepath.Join(parent, "a", "esc"), filepath.Join(parent, "a", "esc2", "metadata")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(parent, "a", "esc", "keep"), []byte("not a table's"), 0o644); err != nil {
		t.Fatal(err)
	}

	s1, _ := catalogSession(t, root)
	mustSQL(t, s1, catSource)
	mustSQL(t, s1, "CREATE TABLE good (a INT)")
	mustSQL(t, s1, "INSERT INTO good VALUES (1), (2)")
	mustSQL(t, s1, catEvens)
	s1.Streams().StopAll()

	long := strings.Repeat("L", MaxTableNameBytes+20)
	bad := []catalogDef{
		{Name: "../../../esc", Kind: kindSource, SQL: "CREATE TABLE `../../../esc` (a INT)"},
		{Name: "..", Kind: kindSource, SQL: "CREATE TABLE `..` (a INT)"},
		{Name: ".", Kind: kindSource, SQL: "CREATE TABLE `.` (a INT)"},
		{Name: "x/y", Kind: kindSource, SQL: "CREATE TABLE `x/y` USING `rate-micro-batch` OPTIONS (rowsPerBatch '1')"},
		{Name: "../esc2", Kind: kindStreaming, SQL: "CREATE STREAMING TABLE `../esc2` AS SELECT value FROM STREAM src"},
		{Name: long, Kind: kindSource, SQL: "CREATE TABLE " + long + " (a INT)"},
	}
	appendCatalogRecords(t, root, append(bad, catalogDef{Name: "later", Kind: kindView, SQL: "CREATE VIEW later AS SELECT a FROM good"})...)
	outside := treeOutside(t, parent, root)

	var logs lockedBuffer
	s2 := NewSession(SessionOptions{CheckpointRoot: root, NoSync: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	memsink.Install(s2, memsink.NewCatalog(), memsink.Options{Persist: true})
	t.Cleanup(s2.Streams().StopAll)
	restored, err := s2.RestoreCatalog(context.Background())
	if err != nil {
		t.Fatalf("RestoreCatalog on a catalog with bad names: %v", err)
	}
	byName := map[string]RestoredTable{}
	for _, r := range restored {
		byName[r.Name] = r
	}
	for _, n := range []string{"src", "good", "evens", "later"} {
		if r, ok := byName[n]; !ok || r.Err != nil {
			t.Errorf("%s was not restored: %+v", n, r)
		}
	}
	if q := byName["evens"].Query; q == nil || !q.IsActive() {
		t.Errorf("streaming table evens does not run after the restart: %v", q)
	}
	if got := int64s(t, s2, "SELECT CAST(a AS BIGINT) FROM later ORDER BY a"); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("good (through the view recorded after the bad names) holds %v, want [1 2]", got)
	}
	for _, d := range bad {
		r := byName[d.Name]
		if r.Err == nil || r.Query != nil {
			t.Errorf("%.20q was restored: %+v", d.Name, r)
			continue
		}
		drop := dropStatementFor(d.Name)
		for _, want := range []string{"under the checkpoint root", "recorded by an earlier build", drop} {
			if !strings.Contains(r.Err.Error(), want) {
				t.Errorf("the restore error of %.20q does not say %q: %v", d.Name, want, r.Err)
			}
		}
		if len(d.Name) < 64 && !strings.Contains(logs.String(), "table="+d.Name+" ") && !strings.Contains(logs.String(), `table="`+d.Name+`"`) {
			t.Errorf("no logged error names %q:\n%s", d.Name, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "DROP TABLE `../../../esc`") {
		t.Errorf("the refusals are not logged as errors with the DROP to run:\n%s", logs.String())
	}
	if !errors.Is(byName[".."].Err, access.ErrDenied) {
		t.Errorf("the restore error of `..` is not an access refusal: %v", byName[".."].Err)
	}
	if got := treeOutside(t, parent, root); !slices.Equal(got, outside) {
		t.Fatalf("the restore changed files outside the root:\nbefore %q\nafter  %q", outside, got)
	}

	// DROP removes each bad record and touches no file.
	archive := filepath.Join(root, ReservedDir, "archive")
	for _, d := range bad {
		if _, err := s2.SQL(context.Background(), "DROP TABLE `"+d.Name+"`"); err != nil {
			t.Errorf("DROP TABLE %.20q: %v", d.Name, err)
		}
	}
	if got := treeOutside(t, parent, root); !slices.Equal(got, outside) {
		t.Errorf("DROP of the bad names changed files outside the root:\nbefore %q\nafter  %q", outside, got)
	}
	if entries, _ := os.ReadDir(archive); len(entries) != 0 {
		t.Errorf("DROP of the bad names archived %v", entries)
	}
	if got := int64s(t, s2, "SELECT CAST(a AS BIGINT) FROM good ORDER BY a"); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("good after the DROPs holds %v, want [1 2]", got)
	}
	s2.Streams().StopAll()

	s3, restored := catalogSession(t, root)
	var names []string
	for _, r := range restored {
		if r.Err != nil {
			t.Errorf("after the DROPs, %s is refused: %v", r.Name, r.Err)
		}
		names = append(names, r.Name)
	}
	if got := strings.Join(names, ","); got != "src,good,evens,later" {
		t.Errorf("restored after the DROPs: %s, want src,good,evens,later", got)
	}
	if got := int64s(t, s3, "SELECT CAST(a AS BIGINT) FROM good ORDER BY a"); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("good after a restart holds %v, want [1 2]", got)
	}
	if got := treeOutside(t, parent, root); !slices.Equal(got, outside) {
		t.Errorf("files outside the root changed:\nbefore %q\nafter  %q", outside, got)
	}
}
