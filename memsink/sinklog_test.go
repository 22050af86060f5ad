package memsink_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// appendTable opens a persisted Append table over dir.
func appendTable(t *testing.T, mem memory.Allocator, dir string, opts memsink.Options) *memsink.Table {
	t.Helper()
	info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: dir}
	return newTable(t, mem, info, persistOpts(opts))
}

func rowsThrough(last int64, n int) []vt.Row {
	var out []vt.Row
	for e := int64(0); e <= last; e++ {
		out = append(out, epochRows(e, n)...)
	}
	return out
}

func segmentSize(t *testing.T, dir, name string) int64 {
	t.Helper()
	st, err := os.Stat(sinkPath(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestLogTornTail: what a crash during an append leaves at the end of the
// newest segment (part of the record, a tail of zeros, a whole-length
// record whose checksum fails) is cut back to the last whole record on
// recovery; the table resumes from the epoch before and appends after
// the cut.
func TestLogTornTail(t *testing.T) {
	tails := []struct {
		name string
		tear func(raw []byte) []byte
	}{
		{"cut short", func(raw []byte) []byte { return raw[:len(raw)-5] }},
		{"header only", func(raw []byte) []byte { return raw[:len(raw)-logRecordLen(t, raw)+7] }},
		{"zeros", func(raw []byte) []byte {
			n := logRecordLen(t, raw)
			return append(raw[:len(raw)-n], make([]byte, n)...)
		}},
		{"last record's checksum", func(raw []byte) []byte { raw[len(raw)-3] ^= 0x10; return raw }},
	}
	for _, c := range tails {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			tbl := appendTable(t, mem, dir, memsink.Options{})
			add(t, tbl, mem, 0, epochRows(0, 3)...)
			add(t, tbl, mem, 1, epochRows(1, 3)...)
			whole := segmentSize(t, dir, "0.seg")
			add(t, tbl, mem, 2, epochRows(2, 3)...)
			tbl.Close()
			raw, err := os.ReadFile(sinkPath(dir, "0.seg"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(sinkPath(dir, "0.seg"), c.tear(raw), 0o644); err != nil {
				t.Fatal(err)
			}
			again := appendTable(t, mem, dir, memsink.Options{})
			if again.LatestEpoch() != 1 || segmentSize(t, dir, "0.seg") != whole {
				t.Fatalf("after recovery: latest %d, segment of %d bytes; want 1 and %d", again.LatestEpoch(), segmentSize(t, dir, "0.seg"), whole)
			}
			checkOrdered(t, "recovered", rowsThrough(1, 3), rowsOf(again.AllData()))
			// The engine runs epoch 2 again.
			add(t, again, mem, 2, epochRows(2, 3)...)
			again.Close()
			third := appendTable(t, mem, dir, memsink.Options{})
			checkOrdered(t, "after the rerun", rowsThrough(2, 3), rowsOf(third.AllData()))
			third.Close()
		})
	}
}

// logRecordLen is the length of the last record of a segment of three
// records of equal shape: the file less its 8-byte header, over three.
func logRecordLen(t *testing.T, raw []byte) int {
	t.Helper()
	if (len(raw)-8)%3 != 0 {
		t.Fatalf("segment of %d bytes is not three equal records", len(raw))
	}
	return (len(raw) - 8) / 3
}

// TestLogDamagedRecord: a record that fails its checks with more records
// after it is damage, not a torn tail: recovery fails with an error naming
// the segment and the record's offset, and nothing is cut.
func TestLogDamagedRecord(t *testing.T) {
	cases := []struct {
		name, want string
		damage     func(raw []byte)
	}{
		{"flipped payload byte", "record at offset 8: checksum mismatch", func(raw []byte) { raw[8+16+40] ^= 0x01 }},
		{"bad frame marker", "record at offset 8: bad frame", func(raw []byte) { raw[8+12] = 'X' }},
		{"bad length", "record at offset 8: checksum mismatch", func(raw []byte) { raw[8] ^= 0x04 }},
		{"future format", "written in memory sink log format v2, this build reads up to v1; upgrade Arrowstream", func(raw []byte) { raw[4] = 2 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			tbl := appendTable(t, mem, dir, memsink.Options{})
			for e := int64(0); e < 3; e++ {
				add(t, tbl, mem, e, epochRows(e, 3)...)
			}
			tbl.Close()
			raw, err := os.ReadFile(sinkPath(dir, "0.seg"))
			if err != nil {
				t.Fatal(err)
			}
			c.damage(raw)
			if err := os.WriteFile(sinkPath(dir, "0.seg"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
			info := arrowstream.SinkInfo{QueryName: "q", Schema: kv, Mode: arrowstream.Append, CheckpointDir: dir}
			_, err = memsink.New(mem, info, persistOpts(memsink.Options{}))
			if err == nil || !strings.Contains(err.Error(), sinkPath(dir, "0.seg")) || !strings.Contains(err.Error(), c.want) || !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Fatalf("want a corruption error naming %s with %q, got %v", sinkPath(dir, "0.seg"), c.want, err)
			}
			if got := segmentSize(t, dir, "0.seg"); got != int64(len(raw)) {
				t.Errorf("damaged segment changed from %d to %d bytes", len(raw), got)
			}
		})
	}
}

// TestLogLegacyAndMixedDirectory: a directory of per-epoch files (as
// earlier builds wrote) recovers; the next epochs go to the log, and a
// directory holding both recovers; once retention supersedes the old
// files they are deleted.
func TestLogLegacyAndMixedDirectory(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	tbl := appendTable(t, mem, dir, memsink.Options{})
	for e := int64(0); e < 3; e++ {
		add(t, tbl, mem, e, epochRows(e, 2)...)
	}
	tbl.Close()
	memsink.ToLegacyFiles(t, dir)
	if got := fmt.Sprint(sinkFiles(t, dir)); got != "[0.arrow 1.arrow 2.arrow]" {
		t.Fatalf("legacy directory %s", got)
	}
	old := appendTable(t, mem, dir, memsink.Options{})
	checkOrdered(t, "legacy", rowsThrough(2, 2), rowsOf(old.AllData()))
	add(t, old, mem, 3, epochRows(3, 2)...)
	add(t, old, mem, 4, epochRows(4, 2)...)
	old.Close()
	if got := fmt.Sprint(sinkFiles(t, dir)); got != "[0.arrow 1.arrow 2.arrow 0.seg]" && got != "[0.arrow 0.seg 1.arrow 2.arrow]" {
		t.Fatalf("mixed directory %s", got)
	}
	mixed := appendTable(t, mem, dir, memsink.Options{})
	checkOrdered(t, "mixed", rowsThrough(4, 2), rowsOf(mixed.AllData()))
	if got := fmt.Sprint(mixed.ChainForTest()); got != "[0.arrow 1.arrow 2.arrow 3.arrow 4.arrow]" {
		t.Errorf("mixed chain %s", got)
	}
	mixed.Close()
	// Retention of two epochs: the old files are superseded and deleted.
	kept := appendTable(t, mem, dir, memsink.Options{MaxEpochs: 2})
	add(t, kept, mem, 5, epochRows(5, 2)...)
	checkOrdered(t, "retained", append(epochRows(4, 2), epochRows(5, 2)...), rowsOf(kept.AllData()))
	kept.Close()
	if got := fmt.Sprint(sinkFiles(t, dir)); got != "[0.seg]" {
		t.Errorf("after retention: files %s", got)
	}
}

// TestLogRotationAndTrim: the log starts a new segment once the current
// one passes its size, and deletes a segment once all its records are
// evicted, across restarts; names are never reused and no restart loses
// or resurrects an epoch.
func TestLogRotationAndTrim(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	const keep = 4
	var want []vt.Row
	epoch := int64(0)
	lastSeg := -1
	for restart := 0; restart < 3; restart++ {
		tbl := appendTable(t, mem, dir, memsink.Options{MaxEpochs: keep})
		tbl.SetSegmentBytesForTest(3000)
		checkOrdered(t, fmt.Sprintf("restart %d", restart), want, rowsOf(tbl.AllData()))
		for i := 0; i < 15; i++ {
			add(t, tbl, mem, epoch, epochRows(epoch, 4)...)
			epoch++
		}
		want = nil
		for e := epoch - keep; e < epoch; e++ {
			want = append(want, epochRows(e, 4)...)
		}
		checkOrdered(t, "retained", want, rowsOf(tbl.AllData()))
		files := sinkFiles(t, dir)
		var segs []int
		for _, f := range files {
			var n int
			if _, err := fmt.Sscanf(f, "%d.seg", &n); err != nil {
				t.Fatalf("unexpected file %s", f)
			}
			segs = append(segs, n)
		}
		slices.Sort(segs)
		// Each segment holds a few epochs; only those with a retained one
		// may remain, so at most keep+1 of them.
		if len(segs) < 2 || len(segs) > keep+1 {
			t.Fatalf("restart %d: segments %v", restart, segs)
		}
		if segs[len(segs)-1] <= lastSeg {
			t.Fatalf("restart %d: no new segment after %d: %v", restart, lastSeg, segs)
		}
		t.Logf("restart %d: segments %v", restart, segs)
		lastSeg = segs[len(segs)-1]
		tbl.Close()
	}
}

// TestLogSmallEpochAfterLarge: the encode buffer kept between epochs is
// reset for each: a small epoch after a large one persists only its own
// rows (nothing of the large one's bytes leaks into its record).
func TestLogSmallEpochAfterLarge(t *testing.T) {
	mem := vt.NewAllocator(t)
	dir := t.TempDir()
	tbl := appendTable(t, mem, dir, memsink.Options{})
	var large []vt.Row
	for i := 0; i < 2000; i++ {
		large = append(large, r(i, strings.Repeat("x", 50)))
	}
	add(t, tbl, mem, 0, large...)
	add(t, tbl, mem, 1, r(7, "small"))
	add(t, tbl, mem, 2)
	tbl.Close()
	again := appendTable(t, mem, dir, memsink.Options{})
	defer again.Close()
	checkOrdered(t, "after restart", append(slices.Clone(large), r(7, "small")), rowsOf(again.AllData()))
	h := again.History()
	if len(h) != 3 || h[1].Rows != 1 || h[2].Rows != 0 {
		t.Fatalf("history %+v", h)
	}
}
