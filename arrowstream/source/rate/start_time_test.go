package rate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// TestStartTimeFileChecksum: the start-time file carries the checkpoint
// logs' checksum, a restart reads it back, a damaged file is refused as
// corrupt naming the file, and the bare JSON of earlier builds still loads.
func TestStartTimeFileChecksum(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.UnixMilli(1_234_567))
	open := func(dir string) (*RateSource, error) {
		r, err := NewRateSource(mem, RateOptions{RowsPerSecond: 5, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return r, r.SetCheckpointDir(dir)
	}

	dir := t.TempDir()
	if _, err := open(dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "0")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"startTimeMs":1234567`)) {
		t.Fatalf("start-time file without checksum: %q", data)
	}
	clock.Advance(time.Hour)
	r, err := open(dir)
	if err != nil || r.startMs != 1_234_567 {
		t.Fatalf("restart: start %d, err %v", r.startMs, err)
	}

	// Every single-byte change is refused. (A truncation that cuts exactly
	// the trailer reads as a legacy file: checkpoint.ReadSealedFile's rule.)
	for i := range data {
		bad := bytes.Clone(data)
		bad[i] ^= 0x01
		checkRefused(t, open, bad, "flip at byte "+strconv.Itoa(i))
	}

	// A file written before checksums were added still loads.
	old := t.TempDir()
	if err := os.WriteFile(filepath.Join(old, "0"), []byte(`{"startTimeMs":42}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := open(old); err != nil || r.startMs != 42 {
		t.Fatalf("legacy file: start %d, err %v", r.startMs, err)
	}
}

func checkRefused(t *testing.T, open func(string) (*RateSource, error), content []byte, what string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "0")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := open(dir)
	if err == nil {
		// A flip inside the JSON digits that still parses must not load
		// silently with a different start.
		t.Fatalf("%s: %q accepted (start %d)", what, content, r.startMs)
	}
	if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Fatalf("%s: %q: error %v does not name %s as corrupt", what, content, err, p)
	}
}
