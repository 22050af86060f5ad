package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/hugeheap"
)

// --huge-pages=false starts nothing and says so; the flag is off by
// default in bench, run and serve, and --huge-pages turns it on.
func TestHugePagesFlag(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if a := startHugeHeap(false, hugeheap.Options{}, logger); a != nil {
		a.Stop()
		t.Fatalf("startHugeHeap(off) started an advisor: %+v", a.Stats())
	}
	if !strings.Contains(log.String(), "huge pages: off") {
		t.Errorf("off: log %q does not say so", log.String())
	}

	log.Reset()
	a := startHugeHeap(true, hugeheap.Options{}, logger)
	defer a.Stop()
	if !strings.Contains(log.String(), "huge pages: ") {
		t.Errorf("on: log %q says nothing about huge pages", log.String())
	}

	for _, c := range []struct {
		name string
		on   func(args ...string) bool
	}{
		{"bench", func(args ...string) bool {
			fs, f := newBenchFlags()
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			return f.hugePages
		}},
		{"run", func(args ...string) bool {
			fs, f, _ := newRunFlags()
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			return f.flight.hugePages
		}},
		{"serve", func(args ...string) bool {
			fs, f, _ := newServeFlags()
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			return f.flight.hugePages
		}},
	} {
		if c.on() {
			t.Errorf("%s: --huge-pages is on by default", c.name)
		}
		if !c.on("--huge-pages") {
			t.Errorf("%s: --huge-pages leaves it off", c.name)
		}
		if c.on("--huge-pages=false") {
			t.Errorf("%s: --huge-pages=false leaves it on", c.name)
		}
	}
}

// On a host without THP (no mode file) or with THP "never", --huge-pages
// does nothing and the program goes on: no advisor runs, and the log
// says so at info (a host without THP is not a fault to warn about).
func TestHugePagesWithoutTHP(t *testing.T) {
	dir := t.TempDir()
	never := filepath.Join(dir, "enabled")
	if err := os.WriteFile(never, []byte("always madvise [never]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "missing"), "level=INFO msg=\"huge pages: the host has no transparent huge pages"},
		{never, "level=INFO msg=\"huge pages: THP mode \\\"never\\\": nothing advised"},
	} {
		var log bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		a := startHugeHeap(true, hugeheap.Options{ModeFile: c.file}, logger)
		if a != nil && a.Stats().Active {
			t.Errorf("%s: an active advisor: %+v", c.file, a.Stats())
		}
		a.Stop()
		if !strings.Contains(log.String(), c.want) || strings.Contains(log.String(), "level=WARN") {
			t.Errorf("%s: log %q, want %q and no warning", c.file, log.String(), c.want)
		}
	}
}
