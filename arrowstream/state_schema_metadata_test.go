package arrowstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestStateSchemasInMetadata: a new checkpoint records its stateful
// operators' state schemas in its metadata file instead of creating
// state/<op>/_metadata/schema (and the directories above it) in the first
// epoch; with the memory provider, whose state records live in the epoch
// log, the checkpoint then has no state directory at all. A restart of the
// same query runs on; a changed query is refused naming the metadata
// file; a switch of provider is still refused. A checkpoint in Spark's v1
// layout keeps the schema file, and a v2 checkpoint written before
// (metadata without schemas, a schema file) is checked against its file.
func TestStateSchemasInMetadata(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		format     int  // CheckpointLogFormat
		old        bool // rewrite the checkpoint as a build before the change left it
		schemaFile bool // a state/0/_metadata/schema file is expected
	}{
		{"v2", 0, false, false},
		{"v1", 1, false, true},
		{"v2 written before", 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			s := NewSession(SessionOptions{Allocator: mem, NoSync: true, CheckpointLogFormat: tc.format,
				Conf: map[string]string{ConfShufflePartitions: "2"}})
			pebblestate.Register(s)
			src := NewMemoryStream(mem, valueSchema)
			defer src.Close()
			s.RegisterStream("input", src)
			dir := t.TempDir()
			sink := &collectsink.Sink{}
			start := func(agg string, opts ...string) (*StreamingQuery, error) {
				w := s.ReadStream("input").GroupBy("value").Agg(agg).
					WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", dir)
				for i := 0; i+1 < len(opts); i += 2 {
					w = w.Option(opts[i], opts[i+1])
				}
				q, err := w.Start(ctx)
				if err == nil {
					err = q.ProcessAllAvailable(ctx)
					q.Stop()
				}
				return q, err
			}
			addInts(t, src, 1, 1, 2)
			if _, err := start("count(*)"); err != nil {
				t.Fatal(err)
			}
			meta := readQueryMetadata(t, dir)
			if tc.old {
				// What a build before the change left: no schemas in the
				// metadata, one schema file per operator.
				schema, ok := meta.StateSchema(0)
				if !ok {
					t.Fatalf("metadata records no schema of operator 0: %+v", meta)
				}
				w := &checkpoint.Writer{NoSync: true}
				data, _ := json.Marshal(checkpoint.QueryMetadata{ID: meta.ID})
				if err := w.WriteSealedFile(filepath.Join(dir, "metadata"), data, true); err != nil {
					t.Fatal(err)
				}
				schemaDir := filepath.Join(dir, "state", "0", "_metadata")
				if err := w.MkdirAll(schemaDir); err != nil {
					t.Fatal(err)
				}
				if err := w.WriteSealedFile(filepath.Join(schemaDir, "schema"), []byte(schema), false); err != nil {
					t.Fatal(err)
				}
				meta = readQueryMetadata(t, dir)
			}
			_, err := os.Stat(filepath.Join(dir, "state", "0", "_metadata", "schema"))
			if (err == nil) != tc.schemaFile {
				t.Fatalf("schema file: %v, want one %v", err, tc.schemaFile)
			}
			if _, ok := meta.StateSchema(0); ok == tc.schemaFile {
				t.Fatalf("metadata %+v: schema of operator 0 recorded %v, want %v", meta, ok, !tc.schemaFile)
			}
			if tc.format != 1 && !tc.old {
				// The memory provider keeps its records in the epoch log.
				if _, err := os.Stat(filepath.Join(dir, "state")); !os.IsNotExist(err) {
					t.Fatalf("a state directory exists: %v", err)
				}
			}
			addInts(t, src, 2, 3)
			if _, err := start("count(*)"); err != nil {
				t.Fatalf("restart of the same query: %v", err)
			}
			addInts(t, src, 3)
			_, err = start("sum(value)")
			want := filepath.Join(dir, "metadata")
			if tc.schemaFile {
				want = filepath.Join(dir, "state", "0", "_metadata", "schema")
			}
			if err == nil || !strings.Contains(err.Error(), "written by a different query") || !strings.Contains(err.Error(), want) {
				t.Fatalf("changed query: %v, want a refusal naming %s", err, want)
			}
			_, err = start("count(*)", ConfStateStoreProvider, "pebble")
			if err == nil || !strings.Contains(err.Error(), "state store provider") {
				t.Fatalf("restart with another provider: %v, want a refusal", err)
			}
			if _, err := start("count(*)"); err != nil {
				t.Fatalf("restart after the refusals: %v", err)
			}
			got := map[string]bool{}
			for _, r := range sink.All() {
				got[fmt.Sprint(r)] = true
			}
			for _, w := range []string{"[1 2]", "[2 2]", "[3 2]"} {
				if !got[w] {
					t.Errorf("no update %q in %v", w, got)
				}
			}
		})
	}
}

func readQueryMetadata(t *testing.T, dir string) checkpoint.QueryMetadata {
	t.Helper()
	m, err := checkpoint.LoadOrCreateMetadata(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
