package files

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestManifestDamageNamed: the file sink's manifest entries carry the
// checkpoint log's checksum line, so a flipped byte or a truncation is
// reported to a reader of the directory as corruption naming the entry.
func TestManifestDamageNamed(t *testing.T) {
	mem := vt.NewAllocator(t)
	ctx := context.Background()
	out := t.TempDir()
	sink, err := NewSink(mem, testSchema, arrowstream.Append, SinkOptions{Format: Arrow, Path: out, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.AddBatch(ctx, 0, feed(mem, vt.Row{int64(0), "a"})); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(out, ManifestDir, "0")
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	flipped[bytes.IndexByte(flipped, '{')+3] ^= 0x01
	for name, data := range map[string][]byte{"flipped byte": flipped, "truncated": good[:len(good)-5]} {
		if err := os.WriteFile(entry, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := readManifest(out)
		if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(ManifestDir, "0")) {
			t.Errorf("%s: reader got %v, want a corruption error naming the entry", name, err)
		}
	}
}
