package pebblestore

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// TestGroupCommitMatchesModel runs random epochs over four partitions
// through CommitGroup, with and without changelog checkpointing, restarts
// the provider now and then (sometimes re-running the last epoch, as
// after a crash before its commit record), and compares every partition
// with a model. Epochs that change nothing write nothing, and no
// <version>.changelog file is written: the changelogs are in the state
// log. In the "switch" run every restart flips changelog checkpointing,
// as an operator changing the setting (or its default changing) between
// runs of a query: a checkpoint written either way restores either way.
func TestGroupCommitMatchesModel(t *testing.T) {
	for _, mode := range []string{"off", "on", "switch"} {
		t.Run("changelog="+mode, func(t *testing.T) {
			const parts, epochs = 4, 40
			root := t.TempDir()
			stateDir := filepath.Join(root, "state")
			opts := Options{ChangelogCheckpointing: mode == "on", MinDeltasForSnapshot: 4, MinVersionsToRetain: 6}
			r := rand.New(rand.NewSource(7))
			var prov *Provider
			var ps []checkpoint.StatePartition
			open := func() {
				if prov != nil {
					if err := prov.Close(); err != nil {
						t.Fatal(err)
					}
				}
				if mode == "switch" {
					opts.ChangelogCheckpointing = !opts.ChangelogCheckpointing
				}
				prov = newTestProvider(t, opts)
				if err := prov.OpenStateLog(stateDir); err != nil {
					t.Fatal(err)
				}
				ps = nil
				for i := 0; i < parts; i++ {
					part, err := prov.OpenPartition(filepath.Join(stateDir, "0", fmt.Sprint(i)))
					if err != nil {
						t.Fatal(err)
					}
					ps = append(ps, part)
				}
			}
			open()
			models := []([]map[string]string){make([]map[string]string, parts)}
			for i := range models[0] {
				models[0][i] = map[string]string{}
			}
			var replay map[int]map[string]string
			for v := int64(0); v < epochs; {
				changes := replay
				if changes == nil {
					changes = map[int]map[string]string{}
					if r.Intn(3) != 0 { // a third of the epochs change nothing
						for i := 0; i < parts; i++ {
							if r.Intn(2) == 0 {
								changes[i] = map[string]string{fmt.Sprint("k", r.Intn(5)): fmt.Sprint(r.Intn(100))}
								if r.Intn(4) == 0 {
									changes[i][fmt.Sprint("k", r.Intn(5))] = ""
								}
							}
						}
					}
				}
				stores := make([]checkpoint.StateStore, parts)
				next := make([]map[string]string, parts)
				for i, part := range ps {
					stores[i] = begin(t, part, v)
					next[i] = maps.Clone(models[v][i])
					for k, val := range changes[i] {
						if val == "" {
							if err := stores[i].Delete([]byte(k)); err != nil {
								t.Fatal(err)
							}
							delete(next[i], k)
						} else {
							if err := stores[i].Put([]byte(k), []byte(val)); err != nil {
								t.Fatal(err)
							}
							next[i][k] = val
						}
					}
				}
				if err := prov.CommitGroup(context.Background(), stores); err != nil {
					t.Fatalf("epoch %d: %v", v, err)
				}
				replay = nil
				if r.Intn(6) == 0 {
					// Crash before the commit record: re-run epoch v.
					replay = changes
					open()
					continue
				}
				models = append(models[:v+1], next)
				v++
				if r.Intn(5) == 0 {
					open()
				}
				for i, part := range ps {
					st := begin(t, part, v)
					got := contents(st)
					st.Abort()
					if !maps.Equal(got, models[v][i]) {
						t.Fatalf("version %d partition %d reads %v, model %v", v, i, got, models[v][i])
					}
				}
			}
			filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
				if strings.HasSuffix(path, changelogSuffix) {
					t.Errorf("group commit wrote %s", path)
				}
				return nil
			})
		})
	}
}

// TestGroupCommitUnchangedWritesNothing: an epoch without changes writes
// no file (with changelog checkpointing, on a version that is not a
// snapshot version, and on one that is: the last manifest still holds).
func TestGroupCommitUnchangedWritesNothing(t *testing.T) {
	root := t.TempDir()
	stateDir := filepath.Join(root, "state")
	var writes []string
	prov := newTestProvider(t, Options{ChangelogCheckpointing: true, MinDeltasForSnapshot: 2})
	prov.opts.Writer.Hook = func(step checkpoint.WriteStep, path string) error {
		if step == checkpoint.BeforeTempWrite {
			writes = append(writes, path)
		}
		return nil
	}
	if err := prov.OpenStateLog(stateDir); err != nil {
		t.Fatal(err)
	}
	var ps []checkpoint.StatePartition
	for i := 0; i < 3; i++ {
		part, err := prov.OpenPartition(filepath.Join(stateDir, "0", fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, part)
	}
	run := func(v int64, change bool) {
		stores := make([]checkpoint.StateStore, len(ps))
		for i, part := range ps {
			stores[i] = begin(t, part, v)
		}
		if change {
			stores[1].Put([]byte("k"), []byte(fmt.Sprint(v)))
		}
		if err := prov.CommitGroup(context.Background(), stores); err != nil {
			t.Fatal(err)
		}
	}
	run(0, true) // version 1: state log record
	run(1, true) // version 2: a snapshot version: partition 1's manifest
	writes = nil
	for v := int64(2); v < 6; v++ {
		run(v, false)
	}
	if len(writes) != 0 {
		t.Fatalf("epochs without changes wrote %v", writes)
	}
}
