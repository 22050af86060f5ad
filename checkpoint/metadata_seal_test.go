package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMetadataSealed: a new checkpoint's metadata file carries a checksum
// trailer; one hex digit of the id changed for another (still a
// well-formed UUID, which the id check alone would accept) is reported
// as corruption naming the file; a file written before the trailer (bare
// JSON) still loads.
func TestMetadataSealed(t *testing.T) {
	dir := t.TempDir()
	w := &Writer{NoSync: true}
	m, err := LoadOrCreateMetadata(dir, w)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "metadata")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(sealPrefix)) {
		t.Fatalf("metadata written without a checksum: %q", data)
	}
	again, err := LoadOrCreateMetadata(dir, w)
	if err != nil || again.ID != m.ID {
		t.Fatalf("reloaded %v, %v; want id %s", again, err, m.ID)
	}
	i := bytes.IndexAny(data, "0123456789abcdef"[1:]) // a digit of the id
	flipped := bytes.Clone(data)
	if flipped[i] == '1' {
		flipped[i] = '2'
	} else {
		flipped[i] = '1'
	}
	if _, err := parseMetadata(path, flipped); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("a changed id digit: %v, want ErrCorrupt naming %s", err, path)
	}
	legacy := []byte(`{"id":"` + m.ID + `"}`)
	if got, err := parseMetadata(path, legacy); err != nil || got.ID != m.ID {
		t.Fatalf("legacy metadata: %v, %v", got, err)
	}
}
