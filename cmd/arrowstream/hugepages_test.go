package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// --huge-pages=false starts nothing and says so; the flag is off by
// default in bench, run and serve, and --huge-pages turns it on.
func TestHugePagesFlag(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if a := startHugeHeap(false, 0, logger); a != nil {
		a.Stop()
		t.Fatalf("startHugeHeap(off) started an advisor: %+v", a.Stats())
	}
	if !strings.Contains(log.String(), "huge pages: off") {
		t.Errorf("off: log %q does not say so", log.String())
	}

	log.Reset()
	a := startHugeHeap(true, 0, logger)
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
