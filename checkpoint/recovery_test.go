package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/s2"
)

// commitVersions commits versions 1..n of a partition, version v putting
// key "k<v>" and updating "total".
func commitVersions(t *testing.T, p *StorePartition, n int) string {
	t.Helper()
	for v := 0; v < n; v++ {
		s, err := p.Begin(int64(v))
		if err != nil {
			t.Fatal(err)
		}
		s.Put([]byte{'k', byte('a' + v)}, []byte{byte(v)})
		s.Put([]byte("total"), []byte{byte(v * 3)})
		if _, err := s.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitMaintenance(); err != nil { // background: let it finish
			t.Fatal(err)
		}
	}
	s, _ := p.Begin(int64(n))
	defer s.Abort()
	return contents(s)
}

func TestLoadRebuildsDamagedSnapshot(t *testing.T) {
	damages := []struct {
		name  string
		apply func(path string) error
	}{
		{"truncated", func(p string) error { return os.Truncate(p, 10) }},
		{"flipped byte", func(p string) error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0xff
			return os.WriteFile(p, b, 0o644)
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
			want := commitVersions(t, p, 8)
			snaps, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
			if len(snaps) < 2 {
				t.Fatalf("want two snapshots or more, got %v", snaps)
			}
			// Damage the newest snapshot: the older one plus the deltas
			// after it rebuild the version.
			newest := filepath.Join(dir, "6.snapshot")
			if err := d.apply(newest); err != nil {
				t.Fatal(err)
			}
			p2, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
			s, err := p2.Begin(8)
			if err != nil {
				t.Fatalf("rebuild around %s: %v", newest, err)
			}
			defer s.Abort()
			if got := contents(s); got != want {
				t.Fatalf("rebuilt %q, want %q", got, want)
			}
			// Without the deltas before it, the damaged snapshot is an error
			// naming it.
			for _, v := range []string{"1", "2", "3"} {
				os.Remove(filepath.Join(dir, v+".delta"))
			}
			os.Remove(filepath.Join(dir, "3.snapshot"))
			p3, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
			if _, err := p3.Begin(8); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), newest) {
				t.Fatalf("want an error naming %s, got %v", newest, err)
			}
		})
	}
}

// TestStateNewerFormatRefused: a state file of a newer format (an IPC
// stream claiming v3, or a columnar body "ASC3") is refused
// (ErrNewerFormat), snapshot or delta, and never worked around.
func TestStateNewerFormatRefused(t *testing.T) {
	for _, file := range []string{"6.snapshot", "8.delta"} {
		for _, how := range []string{"ipc-v3", "columns-v3"} {
			t.Run(file+"/"+how, func(t *testing.T) {
				dir := t.TempDir()
				p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
				commitVersions(t, p, 8)
				path := filepath.Join(dir, file)
				if how == "ipc-v3" {
					rewriteStateFormat(t, path, "3")
				} else {
					raw, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					body := bytes.Clone(raw[:len(raw)-8])
					body[3] = '3'
					if err := os.WriteFile(path, stateTrailer(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p2, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
				_, err := p2.Begin(8)
				if !errors.Is(err, ErrNewerFormat) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
					t.Fatalf("want ErrNewerFormat naming %s, got %v", path, err)
				}
			})
		}
	}
}

// TestStateV1FilesLoad: a partition whose files were all written in
// format v1 (IPC streams, the large ones in a zstd frame) by an older
// build loads, and new deltas (v2) continue it.
func TestStateV1FilesLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
	commitVersions(t, p, 8)
	if err := p.WaitMaintenance(); err != nil {
		t.Fatal(err)
	}
	want := readVersion(t, p, 8)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rewriteStateFormat(t, filepath.Join(dir, e.Name()), "1")
	}
	p2, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
	if got := readVersion(t, p2, 8); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("v1 files load as %v, want %v", got, want)
	}
	s, _ := p2.Begin(8)
	s.Put([]byte("new"), []byte("v2"))
	if _, err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want["new"] = "v2"
	p3, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2})
	if got := readVersion(t, p3, 9); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("v1 files and a v2 delta load as %v, want %v", got, want)
	}
}

func readVersion(t *testing.T, p *StorePartition, version int64) map[string]string {
	t.Helper()
	s, err := p.Begin(version)
	if err != nil {
		t.Fatalf("load version %d: %v", version, err)
	}
	defer s.Abort()
	return readAll(t, s)
}

// rewriteStateFormat re-encodes a state file (a delta keeps its deletes)
// as a v1 IPC stream with the format key set to v.
func rewriteStateFormat(t *testing.T, path, v string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	values, deleted := map[string][]byte{}, map[string]bool{}
	if !bytes.HasPrefix(raw, stateColumnsMagic) {
		t.Fatalf("%s is not a v2 file", path)
	}
	body := raw[5 : len(raw)-8]
	if raw[4] == stateCodecS2 {
		if body, err = s2.Decode(nil, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := walkChunks(body, func(k, val []byte, ok bool) {
		keys = append(keys, string(k))
		if ok {
			values[string(k)] = bytes.Clone(val)
		} else {
			deleted[string(k)] = true
		}
	}); err != nil {
		t.Fatal(err)
	}
	out, err := encodeStateV1(memory.NewGoAllocator(), keys, values, deleted, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseMetadata(t *testing.T) {
	const id = "6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7e91"
	cases := []struct {
		data  string
		err   error // nil: accepted
		words string
	}{
		{`{"id":"` + id + `"}`, nil, ""},
		{`{"id":"` + id + `","version":1}`, nil, ""},
		{`{"id":"` + id + `","version":2}`, ErrNewerFormat, "metadata format v2"},
		{`{"id":"6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7e9"}`, ErrCorrupt, "not a UUID"},
		{`{"id":"6f1c0ab4-2d6e-4a57-9b1e-0c3f5d2a7eg1"}`, ErrCorrupt, "not a UUID"},
		{`{"id":`, ErrCorrupt, "not a query metadata file"},
		{``, ErrCorrupt, "not a query metadata file"},
	}
	for _, c := range cases {
		m, err := parseMetadata("ck/metadata", []byte(c.data))
		switch {
		case c.err == nil && (err != nil || m.ID != id):
			t.Errorf("%s: %v, %v", c.data, m, err)
		case c.err != nil && (!errors.Is(err, c.err) || !strings.Contains(err.Error(), c.words) || !strings.Contains(err.Error(), "ck/metadata")):
			t.Errorf("%s: want %v mentioning %q, got %v", c.data, c.err, c.words, err)
		}
	}
}
