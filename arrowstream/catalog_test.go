package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// catalogSession is a session over root with a persisting memory sink and
// its catalog restored.
func catalogSession(t *testing.T, root string) (*Session, []RestoredTable) {
	t.Helper()
	s := NewSession(SessionOptions{CheckpointRoot: root, NoSync: true})
	memsink.Install(s, memsink.NewCatalog(), memsink.Options{Persist: true})
	t.Cleanup(s.Streams().StopAll)
	restored, err := s.RestoreCatalog(context.Background())
	if err != nil {
		t.Fatalf("RestoreCatalog: %v", err)
	}
	return s, restored
}

func mustSQL(t *testing.T, s *Session, text string) *Result {
	t.Helper()
	res, err := s.SQL(context.Background(), text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	t.Cleanup(func() { res.Close() })
	return res
}

// int64s reads the first column of a query's rows.
func int64s(t *testing.T, s *Session, query string) []int64 {
	t.Helper()
	res := mustSQL(t, s, query)
	recs, err := vector.Drain(context.Background(), res.Op)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out []int64
	for _, r := range recs {
		col := r.Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			out = append(out, col.Value(i))
		}
		r.Release()
	}
	return out
}

// checkMultiples fails unless vals are 0, k, 2k, ... each once (no row
// lost or duplicated), and returns how many there are.
func checkMultiples(t *testing.T, vals []int64, k int64) int {
	t.Helper()
	for i, v := range vals {
		if v != int64(i)*k {
			t.Fatalf("row %d is %d, want %d (rows lost or duplicated): %v", i, v, int64(i)*k, vals)
		}
	}
	return len(vals)
}

const (
	catSource = "CREATE TABLE src USING `rate-micro-batch` OPTIONS (rowsPerBatch '4')"
	catView   = "CREATE TEMPORARY VIEW small AS SELECT * FROM VALUES (1), (2) AS t(n)"
	catEvens  = "CREATE STREAMING TABLE evens TBLPROPERTIES ('trigger' = '20 milliseconds') AS SELECT value FROM STREAM src WHERE value % 2 = 0"
)

// TestCatalogRestartContinues: sources, views and streaming tables come
// back in a new session over the same root; the streaming table keeps its
// query id and its rows, with none lost or duplicated; the statements run
// again are answered as unchanged.
func TestCatalogRestartContinues(t *testing.T) {
	root := t.TempDir()
	s1, restored := catalogSession(t, root)
	if len(restored) != 0 {
		t.Fatalf("empty root restored %v", restored)
	}
	mustSQL(t, s1, catSource)
	mustSQL(t, s1, catView)
	q1 := mustSQL(t, s1, catEvens).Query
	waitFor(t, func() bool { return len(int64s(t, s1, "SELECT value FROM evens")) >= 6 })
	s1.Streams().StopAll()
	before := checkMultiples(t, int64s(t, s1, "SELECT value FROM evens ORDER BY value"), 2)

	s2, restored := catalogSession(t, root)
	var names []string
	for _, r := range restored {
		if r.Err != nil {
			t.Fatalf("restore %s: %v", r.Name, r.Err)
		}
		names = append(names, r.Kind+" "+r.Name)
	}
	if got := strings.Join(names, ", "); got != "source src, view small, streaming evens" {
		t.Fatalf("restored %s", got)
	}
	q2 := restored[2].Query
	if q2 == nil || q2.ID() != q1.ID() {
		t.Fatalf("restored query %v, want id %s", q2, q1.ID())
	}
	if n := int64s(t, s2, "SELECT count(*) FROM small"); len(n) != 1 || n[0] != 2 {
		t.Fatalf("view small: %v", n)
	}
	waitFor(t, func() bool { return len(int64s(t, s2, "SELECT value FROM evens")) >= before+6 })
	// The script run again: every statement continues.
	mustSQL(t, s2, catSource)
	mustSQL(t, s2, catView)
	if q := mustSQL(t, s2, catEvens).Query; q != q2 {
		t.Fatalf("unchanged CREATE STREAMING TABLE started %v, want the running query", q)
	}
	if q := mustSQL(t, s2, strings.Replace(catEvens, "CREATE", "CREATE OR REFRESH", 1)).Query; q != q2 {
		t.Fatalf("unchanged CREATE OR REFRESH started %v, want the running query", q)
	}
	s2.Streams().StopAll()
	checkMultiples(t, int64s(t, s2, "SELECT value FROM evens ORDER BY value"), 2)
}

// TestCatalogChangedDefinition: a changed definition is refused with the
// choice; CREATE OR REPLACE starts over with the old checkpoint archived;
// DROP archives it and the table is not restored.
func TestCatalogChangedDefinition(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catSource)
	q1 := mustSQL(t, s, catEvens).Query
	waitFor(t, func() bool { return len(int64s(t, s, "SELECT value FROM evens")) >= 4 })

	changed := strings.Replace(catEvens, "% 2", "% 3", 1)
	for _, text := range []string{changed, strings.Replace(changed, "CREATE", "CREATE OR REFRESH", 1)} {
		_, err := s.SQL(context.Background(), text)
		var dc *DefinitionChangedError
		if !errors.As(err, &dc) {
			t.Fatalf("%s: got %v, want a DefinitionChangedError", text, err)
		}
		for _, want := range []string{
			"streaming table evens already exists with a different definition.",
			"recorded:  CREATE STREAMING TABLE evens TBLPROPERTIES ('trigger' = '20 milliseconds') AS SELECT value FROM STREAM src WHERE value % 2 = 0",
			"statement: CREATE STREAMING TABLE evens TBLPROPERTIES ('trigger' = '20 milliseconds') AS SELECT value FROM STREAM src WHERE value % 3 = 0",
			"Either start over with the new definition: CREATE OR REPLACE STREAMING TABLE evens ... (the checkpoint " + filepath.Join(root, "evens") + " is archived under " + filepath.Join(root, "_arrowstream", "archive"),
			"or keep the table: run its recorded definition unchanged, which continues from the checkpoint",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
	}
	if !q1.IsActive() {
		t.Fatal("a refused statement stopped the query")
	}
	_, err := s.SQL(context.Background(), "CREATE TABLE src USING `rate-micro-batch` OPTIONS (rowsPerBatch '5')")
	if err == nil || !strings.Contains(err.Error(), "table src already exists with a different definition.") ||
		!strings.Contains(err.Error(), "Either replace it: CREATE OR REPLACE TABLE src ... (streaming tables reading it keep their source until they restart), or DROP TABLE src first") {
		t.Fatalf("changed source: %v", err)
	}

	q2 := mustSQL(t, s, strings.Replace(changed, "CREATE", "CREATE OR REPLACE", 1)).Query
	if q2.ID() == q1.ID() {
		t.Fatal("CREATE OR REPLACE kept the query id")
	}
	archived, _ := filepath.Glob(filepath.Join(root, "_arrowstream", "archive", "evens-*", checkpoint.EpochLogDir))
	if len(archived) != 1 {
		t.Fatalf("archived checkpoints: %v", archived)
	}
	waitFor(t, func() bool { return len(int64s(t, s, "SELECT value FROM evens")) >= 3 })
	s.Streams().StopAll()
	checkMultiples(t, int64s(t, s, "SELECT value FROM evens ORDER BY value"), 3)

	// The replacement is what a new session restores.
	s2, restored := catalogSession(t, root)
	if len(restored) != 2 || restored[1].Query == nil || restored[1].Query.ID() != q2.ID() {
		t.Fatalf("restored %+v, want src and the replaced evens", restored)
	}
	mustSQL(t, s2, "DROP TABLE evens")
	if _, err := os.Stat(filepath.Join(root, "evens")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DROP left the checkpoint in place: %v", err)
	}
	s2.Streams().StopAll()
	_, restored = catalogSession(t, root)
	if len(restored) != 1 || restored[0].Name != "src" {
		t.Fatalf("after DROP restored %+v", restored)
	}
}

// TestCatalogDamagedRecord: a damaged record fails the restore naming it.
func TestCatalogDamagedRecord(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catSource)
	rec := filepath.Join(root, "_arrowstream", "catalog", "0")
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	data[10] ^= 1
	if err := os.WriteFile(rec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := NewSession(SessionOptions{CheckpointRoot: root, NoSync: true})
	_, err = s2.RestoreCatalog(context.Background())
	if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), rec) {
		t.Fatalf("damaged record: %v, want ErrCorrupt naming %s", err, rec)
	}
}

// TestCatalogCompaction: a long log of creates and drops is compacted to
// a snapshot on open, and replays to the same definitions.
func TestCatalogCompaction(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catView)
	for i := 0; i < 30; i++ {
		mustSQL(t, s, "CREATE TEMPORARY VIEW tmp AS SELECT 1 AS one")
		mustSQL(t, s, "DROP VIEW tmp")
	}
	mustSQL(t, s, catSource)
	_, restored := catalogSession(t, root)
	if len(restored) != 2 || restored[0].Name != "small" || restored[1].Name != "src" {
		t.Fatalf("restored %+v", restored)
	}
	ents, err := os.ReadDir(filepath.Join(root, "_arrowstream", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Fatalf("%d records after compaction, want 1 snapshot", len(ents))
	}
	_, restored = catalogSession(t, root)
	if len(restored) != 2 || restored[0].Name != "small" || restored[1].Name != "src" {
		t.Fatalf("restored from the snapshot %+v", restored)
	}
}

// TestCatalogReservedName: the catalog's directory is not a table's.
func TestCatalogReservedName(t *testing.T) {
	s, _ := catalogSession(t, t.TempDir())
	mustSQL(t, s, catSource)
	_, err := s.SQL(context.Background(), "CREATE STREAMING TABLE _arrowstream AS SELECT value FROM STREAM src")
	if err == nil || err.Error() != "arrowstream: streaming table name _arrowstream is reserved (its checkpoint directory holds the catalog)" {
		t.Fatalf("reserved name: %v", err)
	}
}

// TestCatalogDropUnrestorable: a recorded streaming table that cannot be
// restored (its rows were not kept) is reported, and DROP removes its
// record.
func TestCatalogDropUnrestorable(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catSource)
	mustSQL(t, s, strings.Replace(catEvens, "'trigger' = '20 milliseconds'", "'trigger' = '20 milliseconds', 'persist' = 'false'", 1))
	waitFor(t, func() bool { return len(int64s(t, s, "SELECT value FROM evens")) >= 2 })
	s.Streams().StopAll()

	s2, restored := catalogSession(t, root)
	if len(restored) != 2 || restored[1].Err == nil ||
		!strings.HasPrefix(restored[1].Err.Error(), "arrowstream: restore streaming evens from the catalog: ") ||
		!strings.Contains(restored[1].Err.Error(), "This query does not support recovering from checkpoint location") {
		t.Fatalf("restored %+v, want evens refused", restored)
	}
	mustSQL(t, s2, "DROP TABLE evens")
	_, restored = catalogSession(t, root)
	if len(restored) != 1 || restored[0].Name != "src" {
		t.Fatalf("after DROP restored %+v", restored)
	}
}

// TestCatalogConcurrentDDL: DDL from many goroutines (Flight SQL clients)
// is recorded in the order it ran; the log replays to the same catalog.
func TestCatalogConcurrentDDL(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			var err error
			for j := 0; j < 5 && err == nil; j++ {
				name := fmt.Sprintf("v%d", i)
				_, err = s.SQL(context.Background(), fmt.Sprintf("CREATE OR REPLACE TEMPORARY VIEW %s AS SELECT %d AS k", name, j))
				if err == nil && j < 4 {
					_, err = s.SQL(context.Background(), "DROP VIEW "+name)
				}
			}
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s2, restored := catalogSession(t, root)
	if len(restored) != n {
		t.Fatalf("restored %d views, want %d: %+v", len(restored), n, restored)
	}
	for i := 0; i < n; i++ {
		if k := int64s(t, s2, fmt.Sprintf("SELECT CAST(k AS BIGINT) FROM v%d", i)); len(k) != 1 || k[0] != 4 {
			t.Errorf("v%d = %v, want the last definition (4)", i, k)
		}
	}
}
