package arrowstream

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCatalogStaticTableKeepsRows: with a durable catalog a static table
// comes back with the rows inserted into it; DROP and CREATE OR REPLACE
// start it empty (the old rows archived); a damaged file is named.
func TestCatalogStaticTableKeepsRows(t *testing.T) {
	root := t.TempDir()
	const create = "CREATE TABLE dims (k BIGINT, name STRING) USING parquet"
	s1, _ := catalogSession(t, root)
	mustSQL(t, s1, create)
	mustSQL(t, s1, "INSERT INTO dims VALUES (1, 'a'), (2, 'b')")
	mustSQL(t, s1, "INSERT INTO dims SELECT 3, 'c'")
	if got := int64s(t, s1, "SELECT k FROM dims ORDER BY k"); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("before the restart: %v", got)
	}

	s2, restored := catalogSession(t, root)
	for _, r := range restored {
		if r.Err != nil {
			t.Fatalf("restore %s: %v", r.Name, r.Err)
		}
	}
	if got := int64s(t, s2, "SELECT k FROM dims ORDER BY k"); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("after the restart: %v", got)
	}
	mustSQL(t, s2, "INSERT INTO dims VALUES (4, 'd')")
	mustSQL(t, s2, create) // the same definition: the table and its rows stay
	s3, _ := catalogSession(t, root)
	if got := int64s(t, s3, "SELECT k FROM dims ORDER BY k"); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("after the second restart: %v", got)
	}

	// A damaged file fails the table's restore, naming the file.
	dir := filepath.Join(root, ReservedDir, "tables", "dims")
	path := filepath.Join(dir, "00000000000000000001.arrows")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append([]byte(nil), data...)
	damaged[len(damaged)/2] ^= 0x40
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	_, restored = catalogSession(t, root)
	if len(restored) != 1 || restored[0].Err == nil || !strings.Contains(restored[0].Err.Error(), path) {
		t.Fatalf("restore with a damaged file: %+v", restored)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// CREATE OR REPLACE and DROP start over; the old rows are archived.
	s4, _ := catalogSession(t, root)
	mustSQL(t, s4, "CREATE OR REPLACE TABLE dims (k BIGINT, name STRING) USING parquet")
	if got := int64s(t, s4, "SELECT count(*) FROM dims"); !slices.Equal(got, []int64{0}) {
		t.Fatalf("after CREATE OR REPLACE: %v", got)
	}
	mustSQL(t, s4, "INSERT INTO dims VALUES (9, 'z')")
	mustSQL(t, s4, "DROP TABLE dims")
	mustSQL(t, s4, create)
	if got := int64s(t, s4, "SELECT count(*) FROM dims"); !slices.Equal(got, []int64{0}) {
		t.Fatalf("after DROP and CREATE: %v", got)
	}
	archived, _ := filepath.Glob(filepath.Join(root, ReservedDir, "archive", "table-dims-*"))
	if len(archived) != 2 {
		t.Fatalf("archived row directories: %v, want 2", archived)
	}
}
