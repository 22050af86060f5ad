package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// readAll returns a store's live rows.
func readAll(t *testing.T, s StateStore) map[string]string {
	t.Helper()
	got := map[string]string{}
	if err := s.Scan(func(k, v []byte) bool {
		got[string(k)] = string(v)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestChangelogMatchesModel drives a partition through random epochs of
// logged upserts and deletes (with keys upserted and deleted in one
// epoch), Put/Delete epochs, aborted epochs, restarts at random epochs,
// replays of older versions and background compaction, and checks every
// read against a brute-force model of every version.
var errWriteFailed = errors.New("write failed")

func TestChangelogMatchesModel(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			dir := t.TempDir()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			opts := StoreOptions{Allocator: mem, MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 6, MinVersionsToRetain: 8}
			open := func() *StorePartition {
				p, err := OpenStorePartition(dir, &Writer{NoSync: true}, opts)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			p := open()
			defer func() { p.Close() }()
			history := []map[string]string{{}} // by version
			var deferred deferredValues
			defer deferred.check(t)
			version := int64(0)
			for epoch := 0; epoch < 60; epoch++ {
				switch r := rng.IntN(10); {
				case r == 0: // restart
					if err := p.Close(); err != nil {
						t.Fatal(err)
					}
					p = open()
				case r == 1 && version > 3: // replay an older retained version
					back := version - 1 - int64(rng.IntN(3))
					if err := p.WaitMaintenance(); err != nil {
						t.Fatal(err)
					}
					s, err := p.Begin(back)
					if err != nil {
						t.Fatal(err)
					}
					if got := readAll(t, s); !maps.Equal(got, history[back]) {
						t.Fatalf("epoch %d: version %d reads %v, want %v", epoch, back, got, history[back])
					}
					s.Abort()
				}
				s, err := p.Begin(version)
				if err != nil {
					t.Fatal(err)
				}
				model := maps.Clone(history[version])
				if rng.IntN(4) == 0 { // a rebuild reads the (maybe file-only) version
					if got := readAll(t, s); !maps.Equal(got, model) {
						t.Fatalf("epoch %d: version %d reads %v, want %v", epoch, version, got, model)
					}
					if s.Len() != len(model) {
						t.Fatalf("epoch %d: Len %d, want %d", epoch, s.Len(), len(model))
					}
				}
				legacy := rng.IntN(6) == 0
				for range rng.IntN(12) {
					k := fmt.Sprintf("k%02d", rng.IntN(40))
					del := rng.IntN(3) == 0
					v := fmt.Sprintf("v%d.%d", epoch, rng.IntN(1000))
					switch {
					case legacy && del:
						if err := s.Delete([]byte(k)); err != nil {
							t.Fatal(err)
						}
						delete(model, k)
					case legacy:
						if err := s.Put([]byte(k), []byte(v)); err != nil {
							t.Fatal(err)
						}
						model[k] = v
					case del:
						s.(ChangelogWriter).LogDelete([]byte(k))
						delete(model, k)
					case rng.IntN(4) == 0:
						// Written by the caller into the changelog, in
						// pieces (ChangelogStreamer); a failed write
						// records nothing.
						// Pieces are written or, when the writer lends
						// its space (Extend), copied into it.
						fail := rng.IntN(3) == 0
						lend := rng.IntN(2) == 0
						err := s.(ChangelogStreamer).LogUpsertFrom([]byte(k), rng.IntN(8), func(w io.Writer) error {
							for i := 0; i < len(v); i += 3 {
								piece := v[i:min(i+3, len(v))]
								if x, ok := w.(interface{ Extend(int) []byte }); ok && lend {
									copy(x.Extend(len(piece)), piece)
								} else if _, err := w.Write([]byte(piece)); err != nil {
									return err
								}
								if fail && i > 0 {
									return errWriteFailed
								}
							}
							return nil
						})
						switch {
						case fail && !errors.Is(err, errWriteFailed):
							t.Fatalf("failed write: %v", err)
						case !fail && err != nil:
							t.Fatal(err)
						case !fail:
							model[k] = v
						}
					case rng.IntN(3) == 0:
						// Written at the commit (ChangelogDeferrer).
						if err := s.(ChangelogDeferrer).LogUpsertDeferred([]byte(k), deferred.value(v)); err != nil {
							t.Fatal(err)
						}
						model[k] = v
					default:
						s.(ChangelogWriter).LogUpsert([]byte(k), []byte(v))
						model[k] = v
						if rng.IntN(5) == 0 { // upserted then deleted
							s.(ChangelogWriter).LogDelete([]byte(k))
							delete(model, k)
						}
					}
				}
				if !legacy {
					s.(ChangelogWriter).SetLiveRows(int64(len(model)))
					if err := s.Put([]byte("x"), []byte("y")); !errors.Is(err, errMixedWrites) {
						t.Fatalf("Put after a logged change: %v, want a refusal", err)
					}
				}
				if rng.IntN(8) == 0 {
					s.Abort()
					continue
				}
				if s.Len() != len(model) {
					t.Fatalf("epoch %d: Len %d before commit, want %d", epoch, s.Len(), len(model))
				}
				next, err := s.Commit(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if next != version+1 {
					t.Fatalf("commit wrote version %d, want %d", next, version+1)
				}
				version = next
				history = append(history, model)
				if rng.IntN(3) == 0 {
					if err := p.WaitMaintenance(); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A fresh partition rebuilds the last version from the files.
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			p = open()
			s, err := p.Begin(version)
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s); !maps.Equal(got, history[version]) {
				t.Fatalf("after restart version %d reads %v, want %v", version, got, history[version])
			}
			s.Abort()
		})
	}
}

// TestChangelogKeepsNoCopy: after a changelog commit the partition holds
// no decoded state, background compaction writes snapshots from the
// files, and the snapshot alone rebuilds the version.
func TestChangelogKeepsNoCopy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p, _ := openTestPartition(t, dir, StoreOptions{MinDeltasForSnapshot: 2, MinVersionsToRetain: 1})
	want := map[string]string{}
	for v := int64(0); v < 8; v++ {
		s, err := p.Begin(v)
		if err != nil {
			t.Fatal(err)
		}
		cw := s.(ChangelogWriter)
		for i := range 100 {
			k, val := fmt.Sprintf("key%03d", i), fmt.Sprintf("value%d.%d", v, i)
			cw.LogUpsert([]byte(k), []byte(val))
			want[k] = val
		}
		cw.LogDelete([]byte(fmt.Sprintf("key%03d", v)))
		delete(want, fmt.Sprintf("key%03d", v))
		cw.SetLiveRows(int64(len(want)))
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitMaintenance(); err != nil {
			t.Fatal(err)
		}
		if b := p.MemoryBytes(); b != 0 {
			t.Fatalf("version %d: the partition holds %d bytes of state, want none", v+1, b)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, ".snapshot") && !strings.Contains(joined, ".segment") {
		t.Fatalf("no snapshot compacted: %s", joined)
	}
	if strings.Contains(joined, "1.delta") {
		t.Fatalf("old deltas not cleaned up after compaction: %s", joined)
	}
	// Rebuild from the newest snapshot (full, or a segment and its chain)
	// only: the deltas it covers are gone.
	var snap int64
	var snapName string
	for _, n := range names {
		v, kind, _ := strings.Cut(n, ".")
		if kind != "snapshot" && !strings.HasSuffix(kind, ".segment") {
			continue
		}
		if ver, err := strconv.ParseInt(v, 10, 64); err == nil && ver > snap {
			snap, snapName = ver, filepath.Join(dir, n)
		}
	}
	q, _ := openTestPartition(t, dir, StoreOptions{})
	s, err := q.Begin(8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	if got := readAll(t, s); !maps.Equal(got, want) {
		t.Fatalf("rebuilt %d rows, want %d (snapshot %d)", len(got), len(want), snap)
	}
	if _, err := os.Stat(snapName); err != nil {
		t.Fatal(err)
	}
}
