package kafka

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestChangelogEndsCache: the changelog-ends file is a cache written
// without fsync (endsFile); what it holds is read back, and a damaged or
// truncated file (a crash of the machine before the data reached the
// disk) reads as nothing known, so every partition restores from the
// changelog, instead of failing the stage at every start.
func TestChangelogEndsCache(t *testing.T) {
	dir := t.TempDir()
	m := &stateMover{src: &Source{dir: dir}, logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ends: map[string]int64{"0/1": 42, "0/3": 7}}
	if err := m.saveEnds(); err != nil {
		t.Fatal(err)
	}
	back := &stateMover{src: &Source{dir: dir}, logger: m.logger, ends: map[string]int64{}}
	if err := back.loadEnds(); err != nil {
		t.Fatal(err)
	}
	if len(back.ends) != 2 || back.ends["0/1"] != 42 || back.ends["0/3"] != 7 {
		t.Fatalf("ends read back %v, want 0/1=42 0/3=7", back.ends)
	}
	path := filepath.Join(dir, endsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, damaged := range [][]byte{b[:5], b[:len(b)-3], nil, append([]byte("x"), b[1:]...)} {
		if err := os.WriteFile(path, damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		got := &stateMover{src: &Source{dir: dir}, logger: m.logger, ends: map[string]int64{}}
		if err := got.loadEnds(); err != nil {
			t.Fatalf("damaged ends file %q: %v (want it read as absent)", damaged, err)
		}
		if len(got.ends) != 0 {
			t.Fatalf("damaged ends file %q read as %v, want nothing known", damaged, got.ends)
		}
	}
}
