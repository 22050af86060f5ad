package checkpoint

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// deferredValues makes DeferredValues and checks that each is released
// once and filled only before its release.
type deferredValues struct {
	made, released int
	bad            []string
}

type testDeferred struct {
	owner    *deferredValues
	v        string
	released bool
	fills    int
}

func (d *deferredValues) value(v string) *testDeferred {
	d.made++
	return &testDeferred{owner: d, v: v}
}

func (x *testDeferred) Len() int { return len(x.v) }

func (x *testDeferred) Fill(dst []byte) {
	x.fills++
	if x.released {
		x.owner.bad = append(x.owner.bad, "fill of "+x.v+" after its release")
	}
	if len(dst) != len(x.v) {
		x.owner.bad = append(x.owner.bad, "fill of "+x.v+" into a wrong length")
	}
	copy(dst, x.v)
}

func (x *testDeferred) Release() {
	if x.released {
		x.owner.bad = append(x.owner.bad, "second release of "+x.v)
	}
	x.released = true
	x.owner.released++
}

func (d *deferredValues) check(t *testing.T) {
	t.Helper()
	for _, b := range d.bad {
		t.Error(b)
	}
	if d.released != d.made {
		t.Errorf("%d deferred values released, %d made", d.released, d.made)
	}
}

// TestChangelogDeferredWrittenAtCommit: values logged deferred hold no
// bytes in the partition's arena (the point: the join's rows are written
// once, into the state log's record), and the record and the standalone
// delta are byte for byte those of the same entries logged as bytes,
// deferred values between, before and after others, in every position.
func TestChangelogDeferredWrittenAtCommit(t *testing.T) {
	ctx := context.Background()
	type entry struct {
		key, value string
		how        byte // 'u' LogUpsert, 'd' deferred, 'f' LogUpsertFrom, 'x' LogDelete, 'b' LogUpserts
	}
	cases := [][]entry{
		{{"a", "deferred-one", 'd'}},
		{{"a", "first", 'u'}, {"b", "second-deferred", 'd'}, {"c", "third", 'u'}},
		{{"a", "d1", 'd'}, {"b", "d2-longer", 'd'}, {"c", "", 'd'}, {"a", "", 'x'}, {"e", "from-writer", 'f'}},
		{{"k1", "batch", 'b'}, {"k2", "deferred", 'd'}, {"k3", "streamed", 'f'}, {"k2", "", 'x'}, {"k4", "last-deferred", 'd'}},
	}
	for i, es := range cases {
		var deferred deferredValues
		p, err := OpenStorePartition(t.TempDir(), &Writer{NoSync: true}, StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		log := func(s StateStore, plain bool) {
			for _, e := range es {
				how := e.how
				if plain && how != 'x' {
					how = 'u'
				}
				switch how {
				case 'u':
					s.(ChangelogWriter).LogUpsert([]byte(e.key), []byte(e.value))
				case 'x':
					s.(ChangelogWriter).LogDelete([]byte(e.key))
				case 'b':
					s.(ChangelogBatcher).LogUpserts([]byte(e.key), []uint32{uint32(len(e.key))}, []byte(e.value), []uint32{uint32(len(e.value))})
				case 'f':
					if err := s.(ChangelogStreamer).LogUpsertFrom([]byte(e.key), 4, func(w io.Writer) error {
						_, err := w.Write([]byte(e.value))
						return err
					}); err != nil {
						t.Fatal(err)
					}
				case 'd':
					if err := s.(ChangelogDeferrer).LogUpsertDeferred([]byte(e.key), deferred.value(e.value)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		encode := func(plain bool) (record, file []byte, arenaValues int) {
			s, err := p.Begin(0)
			if err != nil {
				t.Fatal(err)
			}
			log(s, plain)
			st := s.(*store)
			arenaValues = len(st.cl.arena.values)
			record = st.cl.arena.appendDelta([]byte("head"), nil)
			file, err = encodeChangelog(st.cl.arena)
			if err != nil {
				t.Fatal(err)
			}
			s.Abort()
			return record, file, arenaValues
		}
		wantRec, wantFile, plainBytes := encode(true)
		gotRec, gotFile, gotBytes := encode(false)
		if !bytes.Equal(gotRec, wantRec) {
			t.Errorf("case %d: record\n%q, want\n%q", i, gotRec, wantRec)
		}
		if !bytes.Equal(gotFile, wantFile) {
			t.Errorf("case %d: delta file differs from the plain one", i)
		}
		held := 0
		for _, e := range es {
			if e.how == 'd' {
				held += len(e.value)
			}
		}
		if gotBytes != plainBytes-held {
			t.Errorf("case %d: the arena holds %d value bytes, want %d (the deferred %d not copied in)", i, gotBytes, plainBytes-held, held)
		}
		// Through a commit, and read back.
		s, err := p.Begin(0)
		if err != nil {
			t.Fatal(err)
		}
		log(s, false)
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := p.Begin(1)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		r.Abort()
		want := map[string]string{}
		for _, e := range es {
			if e.how == 'x' {
				delete(want, e.key)
			} else {
				want[e.key] = e.value
			}
		}
		if len(got) != len(want) {
			t.Errorf("case %d: read back %v, want %v", i, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("case %d: key %s reads %q, want %q", i, k, got[k], v)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		deferred.check(t)
	}
}

// TestLazyStoreDeferred: a LazyLogStore hands a deferred value to the
// store it opens, and releases it at once when the Begin failed (the
// commit fails then, and nothing would release it).
func TestLazyStoreDeferred(t *testing.T) {
	q := openGroupQuery(t, t.TempDir(), &Writer{NoSync: true}, 1, StoreOptions{})
	p := q.parts[0]
	var deferred deferredValues
	busy, err := p.Begin(0)
	if err != nil {
		t.Fatal(err)
	}
	var h LazyLogStore
	h.Reset(p, 0)
	if err := h.LogUpsertDeferred([]byte("k"), deferred.value("lost")); err != nil {
		t.Fatal(err)
	}
	if deferred.released != 1 {
		t.Errorf("after a failed Begin: %d of %d values released", deferred.released, deferred.made)
	}
	if st, _, err := h.Settle(); err == nil || st != nil {
		t.Fatalf("Settle = %v, %v; want the Begin error", st, err)
	}
	h.Abort()
	busy.Abort()

	h.Reset(p, 0)
	if err := h.LogUpsertDeferred([]byte("k"), deferred.value("kept")); err != nil {
		t.Fatal(err)
	}
	if deferred.released != 1 {
		t.Errorf("a value released before the commit")
	}
	st, err := h.Open()
	if err != nil {
		t.Fatal(err)
	}
	if n := st.(*store).cl.arena.deferred; n != len("kept") {
		t.Errorf("the store's arena defers %d bytes, want %d", n, len("kept"))
	}
	h.Abort()
	deferred.check(t)
}
