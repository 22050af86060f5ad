package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetadataRecordsStateSchemas: a metadata file created with state
// schemas returns them on every load; a later load with other schemas
// neither rewrites the file nor changes them; a damaged byte inside a
// schema is corruption naming the file (the seal covers the schemas); a
// file without them (written before, or by a stateless query) loads with
// none.
func TestMetadataRecordsStateSchemas(t *testing.T) {
	dir := t.TempDir()
	w := &Writer{NoSync: true}
	schemas := map[string]string{"0": "aggregate key<k:int> value<n:bigint>", "3": "dedup key<id:bigint>"}
	m, err := LoadOrCreateMetadataWith(dir, w, schemas)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(m.StateSchemas, schemas) {
		t.Fatalf("created with %v, want %v", m.StateSchemas, schemas)
	}
	if s, ok := m.StateSchema(3); !ok || s != schemas["3"] {
		t.Fatalf("StateSchema(3) = %q, %v", s, ok)
	}
	if _, ok := m.StateSchema(1); ok {
		t.Fatal("StateSchema(1) found an operator that was not recorded")
	}
	path := filepath.Join(dir, "metadata")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateMetadataWith(dir, w, map[string]string{"0": "other"})
	if err != nil || again.ID != m.ID || !maps.Equal(again.StateSchemas, schemas) {
		t.Fatalf("reloaded %v, %v; want id %s and the first schemas", again, err, m.ID)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatalf("an existing metadata file was rewritten:\n%q\n%q", before, after)
	}
	i := bytes.Index(before, []byte("bigint"))
	if i < 0 {
		t.Fatalf("no schema in %q", before)
	}
	damaged := bytes.Clone(before)
	damaged[i] = 'B'
	if _, err := parseMetadata(path, damaged); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("a changed schema byte: %v, want ErrCorrupt naming %s", err, path)
	}
	plain, err := LoadOrCreateMetadata(t.TempDir(), w)
	if err != nil || plain.StateSchemas != nil {
		t.Fatalf("metadata without schemas: %v, %v", plain, err)
	}
	if data, _ := json.Marshal(plain); bytes.Contains(data, []byte("stateSchemas")) {
		t.Fatalf("a stateless query's metadata names state schemas: %s", data)
	}
}
