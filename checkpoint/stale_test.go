package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIsTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".metadata.0123456789abcdef.tmp":     true,
		".11.0.pack.0123456789abcdef.tmp":    true,
		".0.seg.ffffffffffffffff.tmp":        true,
		".x.0123456789abcdef.tmp":            true,
		"..0123456789abcdef.tmp":             false, // no target name
		".metadata.0123456789ABCDEF.tmp":     false, // upper-case hex: not ours
		".metadata.0123456789abcde.tmp":      false, // 15 digits
		".metadata.0123456789abcdef0.tmp":    false, // 17 digits
		".metadata.0123456789abcdeg.tmp":     false,
		".metadata0123456789abcdef.tmp":      false, // no dot before the digits
		"metadata.0123456789abcdef.tmp":      false, // not a dot-file
		".metadata.0123456789abcdef.tmp.bak": false,
		".metadata.0123456789abcdef":         false,
		".3.arrow.0123.tmp":                  false,
		".part-00001-1.arrow.tmp":            false, // the file sink's own
		".notes.tmp":                         false,
		".tmp":                               false,
		"":                                   false,
	} {
		if got := IsTempName(name); got != want {
			t.Errorf("IsTempName(%q) = %v, want %v", name, got, want)
		}
	}
	p, err := TempPath(filepath.Join("a", "b", "12.0.pack"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != filepath.Join("a", "b") || !IsTempName(filepath.Base(p)) || !isOwnTemp(filepath.Base(p)) {
		t.Fatalf("TempPath gave %s: not an own temp name beside its target", p)
	}
}

// otherTemp is the temp name of an interrupted write of another process
// (its token is not this process's).
func otherTemp(t *testing.T, target string) string {
	t.Helper()
	token := "01234567"
	if token == processToken {
		token = "89abcdef"
	}
	return "." + target + "." + token + "00000000.tmp"
}

func plant(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestRemoveStaleTemps: other processes' temp files are removed in every
// subdirectory, with their count and bytes logged; this process's own (a
// write in flight) and every name that is not exactly a temp name stay.
func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := []string{
		otherTemp(t, "metadata"),
		filepath.Join("state", "0", otherTemp(t, "11.0.pack")),
		filepath.Join("sinks", "memory", otherTemp(t, "12.view.arrow")),
		filepath.Join("sources", "0", otherTemp(t, "7")),
	}
	for _, p := range stale {
		plant(t, filepath.Join(dir, p), "half a file \x00\xff garbage")
	}
	own, err := TempPath(filepath.Join(dir, "state", "0", "12.0.pack"))
	if err != nil {
		t.Fatal(err)
	}
	keep := []string{
		own,
		filepath.Join(dir, ".notes.tmp"),
		filepath.Join(dir, "metadata.0123456789abcdef.tmp"),
		filepath.Join(dir, "state", ".3.arrow.0123.tmp"),
		filepath.Join(dir, "state", "0", "11.0.pack"),
	}
	for _, p := range keep {
		plant(t, p, "keep")
	}
	// Another query's checkpoint nested in dir is its own writer's.
	nested := filepath.Join(dir, "other", otherTemp(t, "metadata"))
	plant(t, filepath.Join(dir, "other", EpochLogDir, "0.seg"), "seg")
	plant(t, nested, "nested")
	keep = append(keep, nested)
	// A directory named like a temp file is not removed either.
	if err := os.Mkdir(filepath.Join(dir, otherTemp(t, "d")), 0o755); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, filepath.Join(dir, otherTemp(t, "d")))

	var logged bytes.Buffer
	got, err := RemoveStaleTemps(context.Background(), dir, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if want := (StaleTemps{Files: 4, Bytes: 4 * int64(len("half a file \x00\xff garbage"))}); got != want {
		t.Errorf("removed %+v, want %+v", got, want)
	}
	for _, p := range stale {
		if exists(t, filepath.Join(dir, p)) {
			t.Errorf("%s was not removed", p)
		}
	}
	for _, p := range keep {
		if !exists(t, p) {
			t.Errorf("%s was removed", p)
		}
	}
	if !strings.Contains(logged.String(), "files=4") || !strings.Contains(logged.String(), "bytes=") {
		t.Errorf("log %q does not give the count and bytes", logged.String())
	}
	logged.Reset()
	if got, err := RemoveStaleTemps(context.Background(), filepath.Join(dir, "missing"), slog.New(slog.NewTextHandler(&logged, nil))); err != nil || got.Files != 0 || logged.Len() > 0 {
		t.Errorf("missing directory: %+v, %v, log %q", got, err, logged.String())
	}
}

// TestEpochLogWriterLockHook: OnWriterLock's function runs once, at the
// first append that holds the segment's lock, and never for a log that
// only reads, nor for a second writer that the lock refuses.
func TestEpochLogWriterLockHook(t *testing.T) {
	dir := t.TempDir()
	o, c := openV2(t, dir)
	for e := int64(0); e < 3; e++ {
		if _, err := o.Add(e, seqOf(int(e))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	var calls []string
	// A reader: opens, reads, closes.
	r, rc := openV2(t, dir)
	r.SegmentLog().OnWriterLock(func() { calls = append(calls, "reader") })
	if _, _, ok, err := r.Latest(); err != nil || !ok {
		t.Fatalf("latest: %v %v", ok, err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if len(calls) > 0 {
		t.Fatalf("a reader ran the writer's hook: %v", calls)
	}

	// The writer: the hook runs at its first append, once.
	w, wc := openV2(t, dir)
	w.SegmentLog().OnWriterLock(func() { calls = append(calls, "writer") })
	for e := int64(3); e < 6; e++ {
		if _, err := w.Add(e, seqOf(int(e))); err != nil {
			t.Fatal(err)
		}
	}
	if seg := w.SegmentLog(); len(calls) == 0 && !seg.active.exclusive {
		t.Skip("the file system has no flock: no writer lock, no hook")
	}
	if !slices.Equal(calls, []string{"writer"}) {
		t.Fatalf("hook calls %v, want one by the writer", calls)
	}

	// A second writer while the first holds the lock: refused, no hook.
	s, _ := openV2(t, dir)
	s.SegmentLog().OnWriterLock(func() { calls = append(calls, "second") })
	if _, err := s.Add(6, seqOf(6)); !errors.Is(err, ErrExists) {
		t.Fatalf("second writer: %v", err)
	}
	if !slices.Equal(calls, []string{"writer"}) {
		t.Fatalf("hook calls %v after the refused writer", calls)
	}
	if err := wc.Close(); err != nil {
		t.Fatal(err)
	}
}
