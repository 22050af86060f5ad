package chaos

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestRestartRemovesStaleTemps plants, beside every file of a real
// checkpoint (metadata, epoch log, state packs and schema, memory-sink
// log, file-source log), the half-written temp file a write killed after
// its temp write leaves, and a few lookalike names that are not ours.
// While another writer holds the epoch log's lock, a query started on the
// checkpoint is refused and removes nothing (a temp file may be the live
// writer's). Once the lock is free, the restart gives the undamaged
// answer, removes every planted temp file and keeps the lookalikes.
func TestRestartRemovesStaleTemps(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	csvDir := t.TempDir()
	src := func() *genSource { return &genSource{mem: mem, csvDir: csvDir, csvStep: 50} }
	pristine := t.TempDir()
	if _, err := runFixture(t, mem, pristine, damageQuery, src(), steps(0, 50, 12)); err != nil {
		t.Fatal(err)
	}
	ref := t.TempDir()
	copyDir(t, pristine, ref)
	want, err := runFixture(t, mem, ref, damageQuery, src(), steps(600, 50, 2))
	if err != nil {
		t.Fatalf("undamaged restart: %v", err)
	}

	dir := t.TempDir()
	copyDir(t, pristine, dir)
	var planted []string
	dirs, kinds := map[string]bool{}, map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		planted = append(planted, strayTemp(p))
		dirs[filepath.Dir(p)] = true
		kinds[fileKind(filepath.Dir(dir), p)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range planted {
		writeFile(t, p, []byte("half a file \x00\xff\x13 garbage"))
	}
	var lookalikes []string
	for d := range dirs {
		for _, name := range []string{".notes.tmp", "x.0123456789abcdef.tmp", ".x.0123456789ABCDEF.tmp", ".x.0123.tmp"} {
			lookalikes = append(lookalikes, filepath.Join(d, name))
		}
	}
	for _, p := range lookalikes {
		writeFile(t, p, []byte("not ours"))
	}
	t.Logf("planted %d temp files (kinds %v), %d lookalikes", len(planted), slices.Sorted(maps.Keys(kinds)), len(lookalikes))

	// A live writer: another open file of the epoch log's newest segment
	// holding its lock, as a running query's does.
	seg := filepath.Join(dir, checkpoint.EpochLogDir, "0.seg")
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Skipf("no flock here: %v", err)
	}
	_, err = runFixture(t, mem, dir, damageQuery, src(), steps(600, 50, 2))
	if err == nil || !strings.Contains(err.Error(), "concurrently") {
		t.Fatalf("a query beside a live writer: %v, want refused", err)
	}
	for _, p := range planted {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the refused query removed %s: %v", p, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	got, err := runFixture(t, mem, dir, damageQuery, src(), steps(600, 50, 2))
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("restart with stale temp files:\ngot  %v\nwant %v", got, want)
	}
	for _, p := range planted {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after the restart", p)
		}
	}
	for _, p := range lookalikes {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("lookalike %s: %v", p, err)
		}
	}
}
