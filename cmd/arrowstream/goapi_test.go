package main

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// TestGoAPIInTenLines is the example of docs/architecture.md (and the
// README), with its errors checked.
func TestGoAPIInTenLines(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	s := arrowstream.NewSession(arrowstream.SessionOptions{CheckpointRoot: dir})
	memsink.Install(s, memsink.NewCatalog(), memsink.Options{})
	defer s.Streams().StopAll()
	if _, err := s.SQL(ctx, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '1000')"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL(ctx, `CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete')
	AS SELECT value % 10 AS digit, count(*) AS n FROM STREAM ticks GROUP BY value % 10`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // a few epochs
	// (On a loaded machine the first epoch may come later: retry a while.)
	for deadline := time.Now().Add(testutil.Scaled(3 * time.Minute)); ; time.Sleep(200 * time.Millisecond) {
		res, err := s.SQL(ctx, "SELECT * FROM counts ORDER BY digit")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(ctx, res.Op)
		res.Close()
		if err != nil {
			t.Fatal(err)
		}
		n := rows(recs)
		releaseAll(recs)
		if n == 10 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counts has %d rows, want 10", n)
		}
	}
}
