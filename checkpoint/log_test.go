package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestLogAddGetLatest(t *testing.T) {
	l, err := OpenLog(filepath.Join(t.TempDir(), "offsets"), &Writer{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := l.Latest(); ok || err != nil {
		t.Fatalf("empty log: ok=%v err=%v", ok, err)
	}
	for e := int64(0); e < 4; e++ {
		ok, err := l.Add(e, []byte(`{"e":`+string(rune('0'+e))+`}`))
		if err != nil || !ok {
			t.Fatalf("Add(%d) = %v, %v", e, ok, err)
		}
	}
	// Never overwritten.
	if ok, err := l.Add(2, []byte("other")); ok || err != nil {
		t.Fatalf("second Add(2) = %v, %v", ok, err)
	}
	// A fresh handle (no cache) reads what was written.
	l2, _ := OpenLog(l.Dir(), &Writer{})
	body, ok, err := l2.Get(2)
	if err != nil || !ok || string(body) != `{"e":2}` {
		t.Fatalf("Get(2) = %q, %v, %v", body, ok, err)
	}
	e, body, ok, err := l2.Latest()
	if err != nil || !ok || e != 3 || string(body) != `{"e":3}` {
		t.Fatalf("Latest = %d %q %v %v", e, body, ok, err)
	}
	if _, ok, err := l2.Get(9); ok || err != nil {
		t.Fatalf("Get(9) = %v, %v", ok, err)
	}
	// Non-numeric names and temp files are ignored.
	for _, name := range []string{".4.abc.tmp", "05", "x", ".0.crc"} {
		os.WriteFile(filepath.Join(l.Dir(), name), []byte("junk"), 0o644)
	}
	epochs, err := l2.Epochs()
	if err != nil || len(epochs) != 4 || epochs[3] != 3 {
		t.Fatalf("Epochs = %v, %v", epochs, err)
	}
	if err := l2.Purge(2); err != nil {
		t.Fatal(err)
	}
	if err := l2.PurgeAfter(2); err != nil {
		t.Fatal(err)
	}
	if epochs, _ := l2.Epochs(); len(epochs) != 1 || epochs[0] != 2 {
		t.Fatalf("after purges: %v", epochs)
	}
}

func TestLogDetectsDamage(t *testing.T) {
	cases := []struct {
		name   string
		damage func(data []byte) []byte
		want   string
	}{
		{"truncated", func(d []byte) []byte { return d[:len(d)-5] }, "checksum"},
		{"truncated-to-nothing", func(d []byte) []byte { return nil }, "missing checksum line"},
		{"flipped-byte", func(d []byte) []byte { d[4] ^= 0x20; return d }, "checksum mismatch"},
		{"future-version", func(d []byte) []byte { return encodeEntryVersion("v9", `{"x":1}`) }, "log format v9"},
		{"not-a-version", func(d []byte) []byte { return encodeEntryVersion("hello", `{}`) }, "not a version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := OpenLog(t.TempDir(), &Writer{NoSync: true})
			if _, err := l.Add(0, []byte(`{"nextBatchWatermarkMs":5}`)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(l.Dir(), "0")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, c.damage(data), 0o644)
			l2, _ := OpenLog(l.Dir(), &Writer{NoSync: true})
			_, _, err := l2.Get(0)
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("want corrupt error naming %s and %q, got %v", p, c.want, err)
			}
		})
	}
}

// encodeEntryVersion frames body with an arbitrary version line and a
// valid checksum, to test version handling apart from checksums.
func encodeEntryVersion(version, body string) []byte {
	content := version + "\n" + body
	return []byte(fmt.Sprintf("%s\n%s%08x", content, checksumPrefix, crc32c([]byte(content))))
}

func TestLogConcurrentWritersOneWins(t *testing.T) {
	dir := t.TempDir()
	const writers = 8
	var wg sync.WaitGroup
	wins := make(chan bool, writers)
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			l, err := OpenLog(dir, &Writer{NoSync: true}) // separate handles: separate caches, as separate queries
			if err != nil {
				errs <- err
				return
			}
			ok, err := l.Add(0, []byte(`{"writer":`+string(rune('0'+i))+`}`))
			if err != nil {
				errs <- err
				return
			}
			wins <- ok
		}(i)
	}
	wg.Wait()
	close(wins)
	close(errs)
	won := 0
	for ok := range wins {
		if ok {
			won++
		}
	}
	for err := range errs {
		if !strings.Contains(err.Error(), "concurrently") {
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won epoch 0, want exactly 1", won)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

func TestWriteFileFaultStepsLeaveNoPartialFile(t *testing.T) {
	for _, step := range []WriteStep{BeforeTempWrite, AfterTempWrite} {
		t.Run(step.String(), func(t *testing.T) {
			dir := t.TempDir()
			w := &Writer{Hook: func(s WriteStep, _ string) error {
				if s == step {
					return errors.New("injected")
				}
				return nil
			}}
			err := w.WriteFile(filepath.Join(dir, "0"), []byte("data"), false)
			if err == nil || !strings.Contains(err.Error(), "injected") || !strings.Contains(err.Error(), step.String()) {
				t.Fatalf("want injected error at %s, got %v", step, err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 0 {
				t.Fatalf("files left: %v", ents)
			}
		})
	}
	// After the rename the file is complete even if the write then fails.
	dir := t.TempDir()
	w := &Writer{Hook: func(s WriteStep, _ string) error {
		if s == BeforeDirSync {
			return errors.New("injected")
		}
		return nil
	}}
	if err := w.WriteFile(filepath.Join(dir, "0"), []byte("data"), false); err == nil {
		t.Fatal("want error")
	}
	if data, err := os.ReadFile(filepath.Join(dir, "0")); err != nil || string(data) != "data" {
		t.Fatalf("file after late fault: %q, %v", data, err)
	}
}

func TestOffsetLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// The v1 layout (Spark's): a checkpoint created with LogFormat 1
	// keeps it.
	ol, err := OpenOffsetLog(dir, &Writer{NoSync: true, LogFormat: 1})
	if err != nil {
		t.Fatal(err)
	}
	seq := OffsetSeq{
		BatchWatermarkMs: 5000, BatchTimestampMs: 1533784349160,
		Conf:    map[string]string{"spark.sql.shuffle.partitions": "5"},
		Offsets: []json.RawMessage{json.RawMessage("1"), nil, json.RawMessage(`{"logOffset":3}`)},
	}
	if ok, err := ol.Add(0, seq); !ok || err != nil {
		t.Fatal(ok, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "offsets", "0"))
	wantPrefix := "v1\n{\"batchWatermarkMs\":5000,\"batchTimestampMs\":1533784349160,\"conf\":{\"spark.sql.shuffle.partitions\":\"5\"}}\n1\n-\n{\"logOffset\":3}\ncrc32c:"
	if !strings.HasPrefix(string(data), wantPrefix) {
		t.Fatalf("file layout:\n%s\nwant prefix:\n%s", data, wantPrefix)
	}
	ol2, _ := OpenOffsetLog(dir, &Writer{NoSync: true})
	e, got, ok, err := ol2.Latest()
	if err != nil || !ok || e != 0 {
		t.Fatal(e, ok, err)
	}
	if got.BatchWatermarkMs != 5000 || got.BatchTimestampMs != 1533784349160 || got.Conf["spark.sql.shuffle.partitions"] != "5" ||
		len(got.Offsets) != 3 || string(got.Offsets[0]) != "1" || got.Offsets[1] != nil || string(got.Offsets[2]) != `{"logOffset":3}` {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := ol.Add(1, OffsetSeq{Offsets: []json.RawMessage{json.RawMessage("{\n}")}}); err == nil {
		t.Fatal("multi-line offset accepted")
	}
}

func TestCommitLogAndMetadata(t *testing.T) {
	dir := t.TempDir()
	cl, err := OpenCommitLog(dir, &Writer{NoSync: true, LogFormat: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := cl.Add(0, CommitMetadata{NextBatchWatermarkMs: 7}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "commits", "0"))
	if !strings.HasPrefix(string(data), "v1\n{\"nextBatchWatermarkMs\":7}\ncrc32c:") {
		t.Fatalf("commit layout: %q", data)
	}
	m, ok, err := cl.Get(0)
	if err != nil || !ok || m.NextBatchWatermarkMs != 7 {
		t.Fatal(m, ok, err)
	}
	a, err := LoadOrCreateMetadata(dir, &Writer{NoSync: true})
	if err != nil || len(a.ID) != 36 {
		t.Fatal(a, err)
	}
	b, err := LoadOrCreateMetadata(dir, &Writer{NoSync: true})
	if err != nil || b.ID != a.ID {
		t.Fatalf("id changed across loads: %v %v (%v)", a, b, err)
	}
	os.WriteFile(filepath.Join(dir, "metadata"), []byte("{"), 0o644)
	if _, err := LoadOrCreateMetadata(dir, &Writer{NoSync: true}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt metadata: %v", err)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry([]byte("{\"batchWatermarkMs\":0}\n1\n-")))
	f.Add(encodeEntry([]byte("")))
	f.Add([]byte("v1\n{}"))
	f.Add([]byte("crc32c:zz"))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := decodeEntry("fuzz", data)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to a file that decodes the same.
		again, err := decodeEntry("fuzz", encodeEntry(body))
		if err != nil || string(again) != string(body) {
			t.Fatalf("re-encode mismatch: %q vs %q (%v)", body, again, err)
		}
		_, _ = decodeOffsetSeq(body)
		_, _ = decodeCommit(body)
	})
}

// TestLogPurgeByNameAfterTheFirst: retention runs every epoch; after the
// first purge (which lists the directory) later purges delete by name, and
// together they leave exactly the entries at or above the last bound.
func TestLogPurgeByNameAfterTheFirst(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLog(dir, &Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for e := int64(0); e < 30; e++ {
		if _, err := l.Add(e, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if e >= 5 {
			if err := l.Purge(e - 5); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := l.Epochs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || got[0] != 24 || got[5] != 29 {
		t.Fatalf("entries after purges: %v, want 24..29", got)
	}
	// A bound below an earlier one deletes nothing more.
	if err := l.Purge(3); err != nil {
		t.Fatal(err)
	}
	if again, _ := l.Epochs(); len(again) != 6 {
		t.Fatalf("entries after a lower bound: %v", again)
	}
}
