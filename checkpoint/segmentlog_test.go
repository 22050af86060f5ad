package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func openV2(t *testing.T, dir string) (*OffsetLog, *CommitLog) {
	t.Helper()
	o, c, err := OpenEpochLogs(dir, &Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return o, c
}

func seqOf(n int) OffsetSeq {
	return OffsetSeq{BatchTimestampMs: int64(n), Conf: map[string]string{"k": "v"}, Offsets: []json.RawMessage{json.RawMessage(fmt.Sprint(n))}}
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, EpochLogDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestEpochLogV2RoundTrip: a new checkpoint writes the v2 epoch log (no
// offsets/ or commits/ entries); records read back after reopening; a
// staged commit is invisible until the next append carries it.
func TestEpochLogV2RoundTrip(t *testing.T) {
	dir := t.TempDir()
	o, c := openV2(t, dir)
	if ok, err := o.Add(0, seqOf(0)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, err := c.AddWithNext(0, CommitMetadata{NextBatchWatermarkMs: 9}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, ok, _ := c.Get(0); ok {
		t.Fatal("staged commit visible before it was written")
	}
	if ok, _ := c.AddWithNext(0, CommitMetadata{}); ok {
		t.Fatal("second staged commit of epoch 0 accepted")
	}
	if ok, err := o.Add(1, seqOf(1)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := o.Add(1, seqOf(1)); ok {
		t.Fatal("second offsets record of epoch 1 accepted")
	}
	if m, ok, err := c.Get(0); !ok || err != nil || m.NextBatchWatermarkMs != 9 {
		t.Fatal(m, ok, err)
	}
	if f, err := DetectLogFormat(dir); f != 2 || err != nil {
		t.Fatal(f, err)
	}
	for _, d := range []string{"offsets", "commits"} {
		if _, err := os.Stat(filepath.Join(dir, d)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s/ exists in a v2 checkpoint: %v", d, err)
		}
	}
	// A restart: the first log is closed (it holds its segment's lock).
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	o2, c2 := openV2(t, dir)
	e, seq, ok, err := o2.Latest()
	if err != nil || !ok || e != 1 || seq.BatchTimestampMs != 1 || string(seq.Offsets[0]) != "1" {
		t.Fatal(e, seq, ok, err)
	}
	if e, m, ok, err := c2.Latest(); err != nil || !ok || e != 0 || m.NextBatchWatermarkMs != 9 {
		t.Fatal(e, m, ok, err)
	}
	// Close flushes what is staged.
	if _, err := c2.AddWithNext(1, CommitMetadata{}); err != nil {
		t.Fatal(err)
	}
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	_, c3 := openV2(t, dir)
	if e, _, ok, _ := c3.Latest(); !ok || e != 1 {
		t.Fatalf("commit staged before Close not written: latest %d %v", e, ok)
	}
}

// TestEpochLogOneWritePerEpoch: the commit of N and the offsets of N+1
// reach the disk in one append (one write step, one fdatasync).
func TestEpochLogOneWritePerEpoch(t *testing.T) {
	dir := t.TempDir()
	var writes []string
	w := &Writer{NoSync: true, Hook: func(s WriteStep, path string) error {
		if s == BeforeTempWrite {
			writes = append(writes, filepath.Base(path))
		}
		return nil
	}}
	o, c, err := OpenEpochLogs(dir, w)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for n := int64(0); n < 50; n++ {
		if _, err := o.Add(n, seqOf(int(n))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddWithNext(n, CommitMetadata{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(writes) != 50 {
		t.Fatalf("%d writes for 50 epochs: %v", len(writes), writes)
	}
}

// TestEpochLogRotationAndPurge: segments rotate every SegmentEpochs
// epochs and retention deletes whole segments by name, never the newest.
func TestEpochLogRotationAndPurge(t *testing.T) {
	dir := t.TempDir()
	o, c := openV2(t, dir)
	seg := o.entries.(v2Entries).s
	seg.SetSegmentEpochs(4)
	for n := int64(0); n < 20; n++ {
		if _, err := o.Add(n, seqOf(int(n))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddWithNext(n, CommitMetadata{}); err != nil {
			t.Fatal(err)
		}
		if err := o.Purge(n - 6); err != nil {
			t.Fatal(err)
		}
	}
	files := segFiles(t, dir)
	if len(files) < 2 || len(files) > 4 {
		t.Fatalf("segments after purge: %v", files)
	}
	epochs, _ := o.Epochs()
	if epochs[0] > 13 || epochs[len(epochs)-1] != 19 {
		t.Fatalf("retained offsets %v: want at least 13..19", epochs)
	}
	_, _ = openV2(t, dir) // reopens cleanly after purges
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	o2, c2 := openV2(t, dir)
	if e, _, _, _ := c2.Latest(); e != 19 {
		t.Fatalf("latest commit %d", e)
	}
	if got, _ := o2.Epochs(); !slices.Equal(got, epochs) {
		t.Fatalf("reopened epochs %v, want %v", got, epochs)
	}
	// Drop is exact: commits below 18 are gone after a reopen.
	if err := c2.Drop(18); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	_, c3 := openV2(t, dir)
	if got, _ := c3.Epochs(); !slices.Equal(got, []int64{18, 19}) {
		t.Fatalf("commits after Drop(18): %v", got)
	}
}

func lastSegment(t *testing.T, dir string) string {
	t.Helper()
	files := segFiles(t, dir)
	slices.SortFunc(files, func(a, b string) int {
		x, _ := parseSegmentName(a)
		y, _ := parseSegmentName(b)
		return int(x - y)
	})
	return filepath.Join(dir, EpochLogDir, files[len(files)-1])
}

func writeEpochs(t *testing.T, dir string, n int64, segEpochs int64) {
	t.Helper()
	o, c := openV2(t, dir)
	o.entries.(v2Entries).s.SetSegmentEpochs(segEpochs)
	for e := int64(0); e < n; e++ {
		if _, err := o.Add(e, seqOf(int(e))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddWithNext(e, CommitMetadata{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestEpochLogTornTail: a torn last record (any prefix of an append) is
// the normal crash case: ignored on open, cut before the next append.
func TestEpochLogTornTail(t *testing.T) {
	dir := t.TempDir()
	writeEpochs(t, dir, 3, 100)
	path := lastSegment(t, dir)
	whole, _ := os.ReadFile(path)
	extra := appendRecord(nil, record{kind: kindOffsets, epoch: 3, body: []byte(`{"x":1}`)})
	for cut := 1; cut < len(extra); cut++ {
		if err := os.WriteFile(path, append(slices.Clone(whole), extra[:cut]...), 0o644); err != nil {
			t.Fatal(err)
		}
		o, c := openV2(t, dir)
		if e, _, ok, err := o.Latest(); err != nil || !ok || e != 2 {
			t.Fatalf("cut %d: latest %d %v %v", cut, e, ok, err)
		}
		if _, err := o.Add(3, seqOf(3)); err != nil {
			t.Fatalf("cut %d: append after torn tail: %v", cut, err)
		}
		c.Close()
		o2, _ := openV2(t, dir)
		if e, seq, _, err := o2.Latest(); err != nil || e != 3 || seq.BatchTimestampMs != 3 {
			t.Fatalf("cut %d: after repair latest %d %+v %v", cut, e, seq, err)
		}
		if err := os.WriteFile(path, whole, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A flipped byte in the last record is a torn write too.
	bad := slices.Clone(whole)
	bad[len(bad)-1] ^= 0xff
	os.WriteFile(path, bad, 0o644)
	if o, _ := openV2(t, dir); o != nil {
		if e, _, _, _ := o.Latest(); e != 2 {
			// epoch 2's offsets came before its commit: the commit is
			// the last record and is dropped, offsets 2 stay.
			t.Fatalf("latest offsets %d after a torn last commit record", e)
		}
	}
}

// TestEpochLogDamage: damage that a crash cannot cause is refused with
// ErrCorrupt naming the file (and the offset, for a bad record).
func TestEpochLogDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string) string // returns what the error must name
	}{
		{"flipped byte mid-segment", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, EpochLogDir, segmentName(0))
			data, _ := os.ReadFile(path)
			data[segmentHeaderLen+recordHeaderLen+3] ^= 0x01
			os.WriteFile(path, data, 0o644)
			return filepath.Base(path) + ": record at offset 8: checksum mismatch"
		}},
		{"torn record in an older segment", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, EpochLogDir, segmentName(0))
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)-3], 0o644)
			return filepath.Base(path)
		}},
		{"missing segment", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, EpochLogDir, segmentName(3)))
			return "missing"
		}},
		{"bad magic", func(t *testing.T, dir string) string {
			path := lastSegment(t, dir)
			data, _ := os.ReadFile(path)
			copy(data, "XXXX")
			os.WriteFile(path, data, 0o644)
			return filepath.Base(path)
		}},
		{"impossible length mid-segment", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, EpochLogDir, segmentName(0))
			data, _ := os.ReadFile(path)
			data[segmentHeaderLen+3] = 0x7f
			os.WriteFile(path, data, 0o644)
			return "impossible length"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeEpochs(t, dir, 10, 3)
			want := tc.damage(t, dir)
			_, _, err := OpenEpochLogs(dir, &Writer{NoSync: true})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v: want ErrCorrupt naming %q", err, want)
			}
		})
	}
}

// TestEpochLogNewerFormat: a segment in a newer format is refused with
// the upgrade message.
func TestEpochLogNewerFormat(t *testing.T) {
	dir := t.TempDir()
	writeEpochs(t, dir, 2, 100)
	path := lastSegment(t, dir)
	data, _ := os.ReadFile(path)
	data[4] = 3
	os.WriteFile(path, data, 0o644)
	_, _, err := OpenEpochLogs(dir, &Writer{NoSync: true})
	if !errors.Is(err, ErrNewerFormat) || !strings.Contains(err.Error(), "upgrade Arrowstream") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v", err)
	}
}

// TestEpochLogFormatsNeverMix: a v1 checkpoint stays v1 whatever the
// Writer asks for; a checkpoint with both layouts is refused.
func TestEpochLogFormatsNeverMix(t *testing.T) {
	dir := t.TempDir()
	o, _, err := OpenEpochLogs(dir, &Writer{NoSync: true, LogFormat: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Add(0, seqOf(0)); err != nil {
		t.Fatal(err)
	}
	o2, c2, err := OpenEpochLogs(dir, &Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Add(0, CommitMetadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "commits", "0")); err != nil {
		t.Fatalf("v1 checkpoint continued in another format: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, EpochLogDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("epochlog/ created in a v1 checkpoint: %v", err)
	}
	if o2.Dir() != filepath.Join(dir, "offsets") {
		t.Fatal(o2.Dir())
	}
	os.Mkdir(filepath.Join(dir, EpochLogDir), 0o755)
	_, _, err = OpenEpochLogs(dir, &Writer{NoSync: true})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "both v1 logs") {
		t.Fatalf("mixed checkpoint: %v", err)
	}
}

// TestEpochLogConcurrentWriters: a second log appending to the same
// checkpoint is refused, not interleaved: on Linux the second (the first
// holds its segment's lock), elsewhere the one whose segment changed size
// under it.
func TestEpochLogConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	o1, _ := openV2(t, dir)
	if _, err := o1.Add(0, seqOf(0)); err != nil {
		t.Fatal(err)
	}
	o2, _ := openV2(t, dir)
	_, err2 := o2.Add(1, seqOf(1))
	_, err1 := o1.Add(1, seqOf(1))
	if (err1 == nil) == (err2 == nil) {
		t.Fatalf("both or neither writer refused: %v, %v", err1, err2)
	}
	err := errors.Join(err1, err2)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "concurrently") {
		t.Fatalf("second writer: %v", err)
	}
}

// TestEpochLogModel checks random operations, reopenings and torn tails
// against a map model: every acknowledged record survives a reopen, no
// unacknowledged one appears, and staged commits appear only once written.
func TestEpochLogModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		o, c := openV2(t, dir)
		segEpochs := int64(1 + r.Intn(5))
		o.entries.(v2Entries).s.SetSegmentEpochs(segEpochs)
		offsets, commits := map[int64]bool{}, map[int64]bool{}
		staged := map[int64]bool{}
		next := int64(0)
		purged := int64(0)
		wrote := false // an append since the last reopen (a crash can tear only that)
		for step := 0; step < 200; step++ {
			switch op := r.Intn(10); {
			case op < 5:
				if _, err := o.Add(next, seqOf(int(next))); err != nil {
					t.Fatal(err)
				}
				offsets[next] = true
				wrote = true
				for e := range staged {
					commits[e] = true
				}
				clear(staged)
				if _, err := c.AddWithNext(next, CommitMetadata{NextBatchWatermarkMs: next}); err != nil {
					t.Fatal(err)
				}
				staged[next] = true
				next++
			case op < 6:
				if err := c.Flush(); err != nil {
					t.Fatal(err)
				}
				wrote = wrote || len(staged) > 0
				for e := range staged {
					commits[e] = true
				}
				clear(staged)
			case op < 7:
				purged = max(purged, next-int64(r.Intn(8)))
				if err := o.Purge(purged); err != nil {
					t.Fatal(err)
				}
			case op < 8:
				// A crash: staged records are lost, and maybe a torn tail.
				c.entries.(v2Entries).s.mu.Lock()
				c.entries.(v2Entries).s.staged = nil
				c.entries.(v2Entries).s.mu.Unlock()
				clear(staged)
				c.Close()
				if r.Intn(2) == 0 && wrote {
					path := lastSegment(t, dir)
					f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
					junk := appendRecord(nil, record{kind: kindOffsets, epoch: next, body: []byte("{}")})
					f.Write(junk[:1+r.Intn(len(junk)-1)])
					f.Close()
				}
				o, c = openV2(t, dir)
				o.entries.(v2Entries).s.SetSegmentEpochs(segEpochs)
				wrote = false
			default:
				continue
			}
			got, _ := o.Epochs()
			for _, e := range got {
				if !offsets[e] {
					t.Fatalf("seed %d step %d: offsets %d never acknowledged", seed, step, e)
				}
			}
			for e := range offsets {
				if e >= purged && !slices.Contains(got, e) {
					t.Fatalf("seed %d step %d: offsets %d lost (retained from %d): %v", seed, step, e, purged, got)
				}
			}
			gc, _ := c.Epochs()
			for _, e := range gc {
				if !commits[e] {
					t.Fatalf("seed %d step %d: commit %d visible before it was written", seed, step, e)
				}
			}
			for e := range commits {
				if e >= purged && !slices.Contains(gc, e) {
					t.Fatalf("seed %d step %d: commit %d lost: %v", seed, step, e, gc)
				}
			}
		}
	}
}
