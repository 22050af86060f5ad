package arrowstream

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/access"
)

// treeOf lists every path under dir (relative, sorted).
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// refusedUntouched runs stmt, wants it refused with an error containing
// want, and checks that nothing changed on disk (under parent, which holds
// the checkpoint root) nor in the catalog.
func refusedUntouched(t *testing.T, s *Session, parent, stmt, want string) {
	t.Helper()
	before, tables := treeOf(t, parent), sessionCatalog{s}.TableNames()
	_, err := s.SQL(context.Background(), stmt)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%.80s: %v, want an error containing %q", stmt, err, want)
		return
	}
	if len(err.Error()) > 400 {
		t.Errorf("%.80s: the error quotes the whole name (%d bytes): %.200s", stmt, len(err.Error()), err)
	}
	if after := treeOf(t, parent); !slices.Equal(before, after) {
		t.Errorf("%.80s: refused, but the files changed:\nbefore %q\nafter  %q", stmt, before, after)
	}
	if now := (sessionCatalog{s}).TableNames(); !slices.Equal(tables, now) {
		t.Errorf("%.80s: refused, but the catalog changed: %q, then %q", stmt, tables, now)
	}
}

// TestTableNameLongerThanItsDirectory: a table whose name cannot be its
// directory's (longer than MaxTableNameBytes) is refused at CREATE, with
// the limit and the name shortened, before anything is written or
// recorded; a name at the limit is made, filled, dropped (its archive's
// name fits too) and made again after a restart.
func TestTableNameLongerThanItsDirectory(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catSource)
	long := strings.Repeat("t", 300)
	over := strings.Repeat("u", MaxTableNameBytes+1)
	want := "is 300 bytes long: a table kept under the checkpoint root has a name of at most 228 bytes"
	for _, stmt := range []string{
		"CREATE TABLE " + long + " (a INT)",
		"CREATE TABLE " + long + " AS SELECT 1 AS a",
		"CREATE OR REPLACE TABLE " + long + " (a INT)",
		"CREATE STREAMING TABLE " + long + " AS SELECT value FROM STREAM src",
		"CREATE OR REPLACE STREAMING TABLE " + long + " AS SELECT value FROM STREAM src",
	} {
		refusedUntouched(t, s, parent, stmt, want)
	}
	refusedUntouched(t, s, parent, "CREATE TABLE "+over+" (a INT)", "is 229 bytes long")
	// Lower-casing lengthens 'Ⱥ' (2 bytes) to 'ⱥ' (3): the directory's name
	// is the lower-cased one.
	refusedUntouched(t, s, parent, "CREATE TABLE `"+strings.Repeat("Ⱥ", 100)+"` (a INT)", "is 300 bytes long")

	// The Go API: a named query's checkpoint directory is its name.
	_, err := s.ReadStream("src").WriteStream().Format("memory").QueryName(long).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("WriteStream().QueryName(300 bytes).Start: %v", err)
	}

	// The whole message, as docs/operations.md shows it.
	_, err = s.SQL(context.Background(), "CREATE TABLE "+long+" (a INT)")
	if doc := `arrowstream: table name "` + long[:48] + ` … [244 bytes left out] … ` + long[:8] + `" is 300 bytes long: a table kept under the checkpoint root has a name of at most 228 bytes (its directory's name)`; err == nil || err.Error() != doc {
		t.Errorf("CREATE TABLE of a 300-byte name: %v, want %s", err, doc)
	}

	atLimit := strings.Repeat("v", MaxTableNameBytes)
	mustSQL(t, s, "CREATE TABLE "+atLimit+" (a INT)")
	mustSQL(t, s, "INSERT INTO "+atLimit+" VALUES (7)")
	if got := int64s(t, s, "SELECT CAST(a AS BIGINT) FROM "+atLimit); !slices.Equal(got, []int64{7}) {
		t.Errorf("a table named at the limit holds %v, want [7]", got)
	}
	mustSQL(t, s, "CREATE STREAMING TABLE "+atLimit[1:]+"w TBLPROPERTIES ('trigger' = '20 milliseconds') AS SELECT value FROM STREAM src")
	mustSQL(t, s, "DROP TABLE "+atLimit) // archives its rows as table-<name>-<stamp>
	mustSQL(t, s, "DROP TABLE "+atLimit[1:]+"w")
	archived, err := os.ReadDir(filepath.Join(root, ReservedDir, "archive"))
	if err != nil || len(archived) != 2 {
		t.Fatalf("archive after dropping the two tables named at the limit: %v, %v", archived, err)
	}
}

// TestTableNameCannotLeaveItsDirectory: names that filepath.Join resolves
// elsewhere are refused before anything is written. Before, a static table
// `..` named the parent of the tables directory (creating it archived the
// catalog's own directory), `.` the tables directory itself, `a/b` a
// directory inside `a`'s, and `../../x` one outside the checkpoint root.
// Distinct names that are allowed keep distinct directories: case
// variants are one table, and the two Unicode normal forms of "é" are
// two tables with their own rows, also after a restart.
func TestTableNameCannotLeaveItsDirectory(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	s, _ := catalogSession(t, root)
	mustSQL(t, s, catSource)
	for _, name := range []string{"..", ".", "a/b", "../../esc", `a\b`, "x\x00y"} {
		q := "`" + name + "`"
		refusedUntouched(t, s, parent, "CREATE TABLE "+q+" (a INT)", "under the checkpoint root")
		refusedUntouched(t, s, parent, "CREATE TABLE "+q+" AS SELECT 1 AS a", "under the checkpoint root")
		refusedUntouched(t, s, parent, "CREATE STREAMING TABLE "+q+" AS SELECT value FROM STREAM src", "under the checkpoint root")
		if t.Failed() {
			t.FailNow() // a table made under such a name breaks the next statements
		}
	}
	_, err := s.ReadStream("src").WriteStream().Format("memory").QueryName("../../esc").Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "under the checkpoint root") || !errors.Is(err, access.ErrDenied) {
		t.Errorf("WriteStream().QueryName(../../esc).Start: %v, want an access refusal (access.ErrDenied: the server answers PermissionDenied)", err)
	}

	mustSQL(t, s, "CREATE TABLE Up (a INT)")
	if _, err := s.SQL(context.Background(), "CREATE TABLE up (a INT)"); err == nil {
		t.Error("CREATE TABLE up after Up: made a second table with the same directory")
	}
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	mustSQL(t, s, "CREATE TABLE `"+nfc+"` (a INT)")
	mustSQL(t, s, "CREATE TABLE `"+nfd+"` (a INT)")
	mustSQL(t, s, "INSERT INTO `"+nfc+"` VALUES (1)")
	mustSQL(t, s, "INSERT INTO `"+nfd+"` VALUES (2)")
	s.Streams().StopAll()
	s2, _ := catalogSession(t, root)
	for name, want := range map[string]int64{nfc: 1, nfd: 2} {
		if got := int64s(t, s2, "SELECT CAST(a AS BIGINT) FROM `"+name+"`"); !slices.Equal(got, []int64{want}) {
			t.Errorf("%q after a restart holds %v, want [%d]", name, got, want)
		}
	}
	if got := treeOf(t, parent); slices.Contains(got, "esc") || slices.Contains(got, filepath.Join("root", "esc")) {
		t.Errorf("a directory escaped: %q", got)
	}
}

// TestTableNameOneRule: the server's policy (access.CheckName, applied to
// a query's name before its checkpoint directory is made) and the table
// name check are one rule with one message: a name refused by either is
// refused by both with the same text, which says why (under the checkpoint
// root) and quotes a long name shortened. Before, the policy had its own
// copy of the rule, worded differently and quoting the whole name.
func TestTableNameOneRule(t *testing.T) {
	root := t.TempDir()
	pol, err := access.New(access.Config{CheckpointRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(SessionOptions{CheckpointRoot: root, NoSync: true, Access: pol})
	t.Cleanup(s.Streams().StopAll)
	mustSQL(t, s, catSource)
	long := strings.Repeat("x", 150) + "/" + strings.Repeat("y", 150)
	for _, name := range []string{"..", ".", "a/b", `a\b`, "x\x00y", long} {
		want := checkTableDirName(name)
		if want == nil || !errors.Is(want, access.ErrDenied) {
			t.Fatalf("checkTableDirName(%q) = %v, want an access refusal", name, want)
		}
		if got := access.CheckName(name); got == nil || got.Error() != want.Error() {
			t.Errorf("access.CheckName(%.20q) = %v, want the table name check's %v", name, got, want)
		}
		_, err := s.ReadStream("src").WriteStream().Format("memory").QueryName(name).Start(context.Background())
		if err == nil || !errors.Is(err, access.ErrDenied) || !strings.HasSuffix(err.Error(), want.Error()) {
			t.Errorf("a query named %.20q under the policy: %v, want it refused with %v", name, err, want)
		}
		if err != nil && len(err.Error()) > 400 {
			t.Errorf("the refusal of a %d-byte name quotes it whole (%d bytes)", len(name), len(err.Error()))
		}
	}
	// The length limit is the table check's own: a query's checkpoint
	// directory is not archived under a longer name.
	if err := access.CheckName(strings.Repeat("z", 300)); err != nil {
		t.Errorf("access.CheckName of a long plain name: %v", err)
	}
}
