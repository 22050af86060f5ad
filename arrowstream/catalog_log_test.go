package arrowstream

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// TestCatalogLogRefusesBadRecords: a record whose checksum is right but
// whose content cannot be trusted stops the replay with an error naming
// the record, never a silently smaller catalog.
func TestCatalogLogRefusesBadRecords(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		is         error
	}{
		{`{"format":1,"op":"create","def":{"name":"t","kind":"source","sql":"CREATE TABLE t USING rate"}`,
			"undecodable JSON (unexpected end of JSON input)", checkpoint.ErrCorrupt},
		{`{"format":2,"op":"create"}`,
			"written in catalog format v2, this build reads up to v1; upgrade Arrowstream to read it", checkpoint.ErrNewerFormat},
		{`{"format":1,"op":"rename","name":"t"}`, `unknown operation "rename"`, checkpoint.ErrCorrupt},
		{`{"format":1,"op":"create","def":{"name":"t"}}`, "create record without a definition", checkpoint.ErrCorrupt},
		{`{"format":1,"op":"drop"}`, "drop record without a name", checkpoint.ErrCorrupt},
		{`{"format":1,"op":"snapshot","defs":[{"name":"t"}]}`, "snapshot with an empty definition", checkpoint.ErrCorrupt},
	} {
		root := t.TempDir()
		lg, err := checkpoint.OpenLog(catalogDir(root), &checkpoint.Writer{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lg.Add(0, []byte(tc.body)); err != nil {
			t.Fatal(err)
		}
		_, err = NewSession(SessionOptions{CheckpointRoot: root, NoSync: true}).RestoreCatalog(context.Background())
		want := "arrowstream: catalog record " + filepath.Join(catalogDir(root), "0") + ": " + tc.want
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, tc.is) {
			t.Errorf("%s:\n got %v\nwant %s... (%v)", tc.body, err, want, tc.is)
		}
	}
}

// TestRestoreCatalogPreconditions: a catalog needs a checkpoint root, and
// is restored once.
func TestRestoreCatalogPreconditions(t *testing.T) {
	_, err := NewSession(SessionOptions{}).RestoreCatalog(context.Background())
	if err == nil || err.Error() != "arrowstream: RestoreCatalog needs SessionOptions.CheckpointRoot" {
		t.Errorf("no root: %v", err)
	}
	s := NewSession(SessionOptions{CheckpointRoot: t.TempDir(), NoSync: true})
	if _, err := s.RestoreCatalog(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RestoreCatalog(context.Background()); err == nil || err.Error() != "arrowstream: the session's catalog is already restored" {
		t.Errorf("second restore: %v", err)
	}
}

// TestCatalogLogRefusesAForeignRecord: a record written under the next
// position by someone else (a second writer on the root) fails the DDL
// rather than overwriting it.
func TestCatalogLogRefusesAForeignRecord(t *testing.T) {
	root := t.TempDir()
	s, _ := catalogSession(t, root)
	lg, err := checkpoint.OpenLog(catalogDir(root), &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lg.Add(0, []byte(`{"format":1,"op":"drop","name":"x"}`)); err != nil {
		t.Fatal(err)
	}
	_, err = s.SQL(context.Background(), catView)
	want := "arrowstream: catalog record 0 under " + catalogDir(root) + " exists already: another process writes this checkpoint root"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if _, err := s.Catalog().Table("small"); err == nil {
		t.Error("the view stayed although its record failed")
	}
}
