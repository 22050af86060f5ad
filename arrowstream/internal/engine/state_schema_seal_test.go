package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestStateSchemaSealed: the state schema file carries a checksum; a
// damaged one stops the query with a corruption error naming the file (not
// a "different query" refusal), and one written before sealing (no
// trailer) still loads.
func TestStateSchemaSealed(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	sink := &collectsink.Sink{}
	run := func() error {
		t.Helper()
		q := startTestQuery(t, dir, src, sink, newCountExecutor(t, mem, stream.Update), processingTime(0))
		defer q.Stop()
		return q.ProcessAllAvailable(ctx)
	}
	src.AddData([]any{1})
	if err := run(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state", "0", "_metadata", "schema")
	sealed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	payload, legacy, err := checkpoint.Unseal(path, sealed)
	if err != nil || legacy {
		t.Fatalf("schema file %q: legacy %v, %v", sealed, legacy, err)
	}
	damaged := bytes.Clone(sealed)
	damaged[2] ^= 0x20
	if err := os.WriteFile(path, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	src.AddData([]any{2})
	err = run()
	if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), "_metadata/schema") || strings.Contains(err.Error(), "different query") {
		t.Fatalf("damaged schema file: %v, want a corruption error naming it", err)
	}
	// A file written before sealing: the bare payload.
	if err := os.WriteFile(path, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Fatalf("unsealed schema file: %v", err)
	}
}
