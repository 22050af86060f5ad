package arrowstream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// A DROP in one session of a streaming table that another session (or
// process) runs does not move the checkpoint from under the running
// query: the archive needs the checkpoint's writer lock and is refused,
// the checkpoint stays where its writer writes, and the writer goes on.
func TestDropDoesNotArchiveAHeldCheckpoint(t *testing.T) {
	root := t.TempDir()
	s1, _ := catalogSession(t, root)
	mustSQL(t, s1, catSource)
	q1 := mustSQL(t, s1, catEvens).Query
	waitFor(t, func() bool { return len(int64s(t, s1, "SELECT value FROM evens")) >= 4 })

	// The second session restores the catalog; the running table's start
	// is refused by the lock, its definition stays known.
	s2, restored := catalogSession(t, root)
	for _, r := range restored {
		if r.Name == "evens" && !errors.Is(r.Err, checkpoint.ErrInUse) {
			t.Fatalf("restore of the running table: %v, want checkpoint.ErrInUse", r.Err)
		}
	}
	dir := filepath.Join(root, "evens")
	_, err := s2.SQL(context.Background(), "DROP TABLE evens")
	if !errors.Is(err, checkpoint.ErrInUse) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("DROP of a table another session runs: %v, want checkpoint.ErrInUse naming %s", err, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, checkpoint.EpochLogDir)); err != nil {
		t.Fatalf("the running query's checkpoint moved: %v", err)
	}
	if archived, _ := filepath.Glob(filepath.Join(root, ReservedDir, "archive", "evens-*")); len(archived) != 0 {
		t.Fatalf("archived under a live writer: %v", archived)
	}
	n := len(int64s(t, s1, "SELECT value FROM evens"))
	waitFor(t, func() bool { return len(int64s(t, s1, "SELECT value FROM evens")) >= n+4 })
	if !q1.IsActive() {
		t.Fatalf("the running query ended: %v", q1.Exception())
	}
	s1.Streams().StopAll()
	checkMultiples(t, int64s(t, s1, "SELECT value FROM evens ORDER BY value"), 2)
}
