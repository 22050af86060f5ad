package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// TestMovingLogStoreStreams: a moving store over a changelog store takes
// streamed values (checkpoint.ChangelogStreamer, the join's path), and
// over random epochs of streamed, copied and deleted values and failed
// writes, the changes it records for the changelog topic and what the
// inner store holds after each commit (read back from its files) match a
// model; with an overlay (a moved partition) the streamed values go to
// its contents. Without LogUpsertFrom a cluster join fell back to
// encoding each batch into a buffer of its own for LogUpsert to copy.
func TestMovingLogStoreStreams(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() (*checkpoint.MemoryProvider, checkpoint.StatePartition) {
		prov := checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{})
		part, err := prov.OpenPartition(dir)
		if err != nil {
			t.Fatal(err)
		}
		return prov, part
	}
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(7, 11))
	errWrite := errors.New("write failed")
	for version := int64(0); version < 30; version++ {
		prov, part := open()
		st, err := part.Begin(version)
		if err != nil {
			t.Fatal(err)
		}
		cw, ok := st.(checkpoint.ChangelogWriter)
		if !ok {
			t.Fatalf("the memory provider's store %T takes no changelog", st)
		}
		ms := &movingStore{inner: st, cw: cw, liveRows: -1}
		var w checkpoint.ChangelogWriter = &movingLogStore{ms}
		streamer, ok := w.(checkpoint.ChangelogStreamer)
		if !ok {
			t.Fatal("movingLogStore does not stream values into the changelog (checkpoint.ChangelogStreamer)")
		}
		over := version%5 == 3
		if over {
			// A moved partition: the epoch starts from the moved contents
			// (here the model itself, as the changelog topic would give).
			if err := ms.overlay(maps.Clone(toBytes(model))); err != nil {
				t.Fatal(err)
			}
		}
		var want []stateChange
		for range 1 + rng.IntN(20) {
			key := fmt.Sprintf("k%02d", rng.IntN(30))
			switch op := rng.IntN(4); op {
			case 0, 1:
				// A streamed value of several writes; sometimes the
				// size hint is wrong.
				val := make([]byte, rng.IntN(3000))
				for i := range val {
					val[i] = byte(rng.Uint32())
				}
				hint := len(val)
				if op == 1 {
					hint = rng.IntN(100)
				}
				err := streamer.LogUpsertFrom([]byte(key), hint, func(w io.Writer) error {
					for rest := val; len(rest) > 0; {
						n := min(len(rest), 1+rng.IntN(700))
						if _, err := w.Write(rest[:n]); err != nil {
							return err
						}
						rest = rest[n:]
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				model[key] = string(val)
				want = append(want, stateChange{key: []byte(key), value: val})
			case 2:
				// A failed write records nothing.
				err := streamer.LogUpsertFrom([]byte(key), 10, func(w io.Writer) error {
					w.Write([]byte("partial"))
					return errWrite
				})
				if !errors.Is(err, errWrite) {
					t.Fatalf("failed write: %v", err)
				}
			case 3:
				if _, ok := model[key]; ok {
					w.LogDelete([]byte(key))
					delete(model, key)
					want = append(want, stateChange{key: []byte(key)})
				}
			}
		}
		w.SetLiveRows(int64(len(model)))
		if len(ms.changes) != len(want) {
			t.Fatalf("version %d: %d changes recorded, %d made", version, len(ms.changes), len(want))
		}
		for i, c := range ms.changes {
			if string(c.key) != string(want[i].key) || string(c.value) != string(want[i].value) || (c.value == nil) != (want[i].value == nil) {
				t.Fatalf("version %d change %d: key %q (%d bytes), want %q (%d bytes)", version, i, c.key, len(c.value), want[i].key, len(want[i].value))
			}
		}
		if over {
			if got := toStrings(ms.cur); !maps.Equal(got, model) {
				t.Fatalf("version %d: the overlay holds %d keys, the model %d", version, len(got), len(model))
			}
			if err := ms.writeOverlay(); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		prov.Close()
		// Read back from the files by a fresh provider.
		prov, part = open()
		rd, err := part.Begin(version + 1)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		if err := rd.Range(func(k, v []byte) bool { got[string(k)] = string(v); return true }); err != nil {
			t.Fatal(err)
		}
		rd.Abort()
		prov.Close()
		if !maps.Equal(got, model) {
			t.Fatalf("version %d: the store holds %d keys, the model %d", version+1, len(got), len(model))
		}
	}
}

func toBytes(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}

func toStrings(m map[string][]byte) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
