package arrowstream

import (
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/internal/clip"
)

// MaxTableNameBytes is the longest name, in bytes, of a table that keeps
// files under the checkpoint root (a streaming table's checkpoint, a
// durable catalog's static table rows). A table's directory is named
// after it, and a dropped table's directory is archived as
// table-<name>-<UTC stamp>: that archive name must also fit one path
// component (NAME_MAX, 255 bytes on Linux, macOS and Windows), so the
// limit is 255 less the archive's additions. A longer name failed after
// the table was half made (a raw "mkdir ...: file name too long" at its
// first INSERT, with the table left in the catalog).
const MaxTableNameBytes = nameMaxBytes - len(archivePrefix) - len(archiveStampSuffix)

const (
	nameMaxBytes       = 255
	archivePrefix      = "table-"
	archiveStampSuffix = "-20060102T150405.000Z"
	// shownNameBytes bounds a refused name quoted in an error.
	shownNameBytes = 64
)

// checkTableDirName refuses a table name that cannot name its own
// directory under the checkpoint root: empty, one that filepath.Join
// would resolve elsewhere or the OS cannot store (access.CheckName, the
// rule the server's policy applies to query names), or too long for one
// path component. Without it, `..` named the parent of the tables
// directory (its rows were written there and its stale-data archive moved
// the catalog's own directory), `a/b` nested in `a`, and `../../x` wrote
// outside the checkpoint root. The lower-cased form is measured too:
// static tables' directories are lower-cased, and lower-casing may
// lengthen a name.
func checkTableDirName(name string) error {
	if name == "" {
		return fmt.Errorf("arrowstream: table name %q cannot name the table's directory under the checkpoint root", name)
	}
	// A name that would resolve outside its directory is an access
	// refusal (access.ErrDenied): the server answers it with
	// PermissionDenied like every other attempt to reach a path outside
	// the checkpoint root.
	if err := access.CheckName(name); err != nil {
		return err
	}
	if n := max(len(name), len(strings.ToLower(name))); n > MaxTableNameBytes {
		return fmt.Errorf("arrowstream: table name %q is %d bytes long: a table kept under the checkpoint root has a name of at most %d bytes (its directory's name)",
			clip.Text(name, shownNameBytes), n, MaxTableNameBytes)
	}
	return nil
}
