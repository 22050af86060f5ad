package arrowstream

import (
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/internal/clip"
)

// A durable catalog written by a build that did not check table names at
// CREATE may record a table whose name cannot name its directory under
// the checkpoint root ("..", "a/b", "../../x", a name too long for one
// path component). Replaying it would make, read or archive a directory
// outside the table's own (a static table `../../x` kept its rows outside
// the root, a DROP of it moved that directory into the archive, and a
// DROP of `.` archived every static table's rows). Such a definition is
// therefore not replayed: the restore reports it, with what to do, and
// restores every other definition; a DROP removes its record and touches
// no file.

// badRecordedName reports why the recorded definition d cannot be
// restored under its name (nil when it can). Views keep no directory and
// CREATE VIEW does not check names, so views are never refused.
func badRecordedName(d catalogDef) error {
	if d.Kind == kindView {
		return nil
	}
	err := checkTableDirName(d.Name)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w; the name was recorded by an earlier build, and nothing is read or written under it: "+
		"%s removes it from the catalog (no file is touched: remove its old files by hand if it kept any), "+
		"then create the table again under another name", err, dropStatementFor(d.Name))
}

// dropStatementFor is the DROP TABLE statement of name, quoted. A long
// name is shortened, as errors quote names, and the statement says where
// the whole name is (the restore's log line, RestoredTable.Name).
func dropStatementFor(name string) string {
	stmt := "DROP TABLE `" + strings.ReplaceAll(clip.Text(name, shownNameBytes), "`", "``") + "`"
	if len(name) > shownNameBytes {
		stmt += " (with the whole name, the table field of the log line)"
	}
	return stmt
}
