package arrowstream

import (
	"context"
	"errors"
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

// TestCatalogNamesFoldAsTheCatalog: table names are compared as their
// lower case (strings.ToLower, as Spark's toLowerCase(Locale.ROOT)), so a
// name that only Unicode case folding equates with a running table's
// ("ſ", the long s, folds to "s"; its lower case is itself) is another
// table: DROP TABLE of it must not stop the running one, and CREATE OR
// REPLACE of it must not archive the running one's checkpoint.
func TestCatalogNamesFoldAsTheCatalog(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catSource)
	mustSQL(t, s, "CREATE STREAMING TABLE s TBLPROPERTIES ('trigger' = '20 milliseconds') AS SELECT value FROM STREAM src")
	running := func() bool { return s.activeQuery("s") != nil && s.activeQuery("s").IsActive() }
	if !running() {
		t.Fatal("s is not running")
	}
	if _, err := s.SQL(context.Background(), "DROP TABLE `ſ`"); !errors.Is(err, plan.ErrTableNotFound) {
		t.Errorf("DROP TABLE `ſ` while s runs: %v, want a table not found", err)
	}
	if !running() {
		t.Fatal("DROP TABLE `ſ` stopped the streaming table s")
	}
	mustSQL(t, s, "CREATE OR REPLACE STREAMING TABLE `ſ` TBLPROPERTIES ('trigger' = '20 milliseconds') AS SELECT value FROM STREAM src")
	if !running() {
		t.Fatal("CREATE OR REPLACE STREAMING TABLE `ſ` stopped the streaming table s")
	}
}
