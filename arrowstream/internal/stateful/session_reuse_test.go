package stateful

import "testing"

// TestSessionKeyEntriesReuse checks the life of a dropped key's entry:
// it is not reused in the epoch that dropped it, nor while a live
// snapshot handed out before is unreleased (its key string may be read),
// and once reused it carries nothing of the key it held: no sessions,
// stamp, arming, stored flag or key bytes, with a list grown past the
// entry's own storage kept for capacity only.
func TestSessionKeyEntriesReuse(t *testing.T) {
	d := &sessionDecoded{}
	d.begin(true)
	ks := d.newKeySessions([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 2)
	ks.list = append(ks.list, liveSession{start: 1, end: 2, sid: 3, gid: 4}, liveSession{start: 5, end: 6, sid: 7, gid: 8})
	ks.stamp, ks.num, ks.stored, ks.armed, ks.armedOK = d.stamp, 5, true, 2, true
	grown := cap(ks.list)
	// Evicted: its list emptied, then released.
	ks.list = ks.list[:0]
	d.release(ks)
	if got := d.newKey(); got == ks {
		t.Fatal("an entry released this epoch was reused in the same epoch")
	}
	d.begin(false) // a snapshot is outstanding
	if got := d.newKey(); got == ks {
		t.Fatal("an entry was reused while a snapshot handed out before may read its key")
	}
	d.begin(true)
	got := d.newKey()
	if got != ks {
		t.Fatal("a released entry was not reused once no snapshot was outstanding")
	}
	if got.key != "" || got.part != 0 || got.stamp != 0 || got.num != 0 || got.stored || got.armedOK || got.armed != 0 || got.word != [fixedKeyLen]byte{} {
		t.Fatalf("reused entry keeps its old key's fields: %+v", *got)
	}
	if len(got.list) != 0 || cap(got.list) != grown {
		t.Fatalf("reused entry's list: %d sessions, capacity %d (want 0 and the grown %d)", len(got.list), cap(got.list), grown)
	}
	if s := got.list[:cap(got.list)]; s[0] != (liveSession{}) || s[1] != (liveSession{}) {
		t.Fatalf("reused entry's list storage keeps old sessions: %v", s)
	}
	got.setKey([]byte{0, 9, 9, 9, 9, 9, 9, 9, 9})
	if w, ok := fixedKeyWord(got.key); !ok || w != 0x0909090909090909 {
		t.Fatalf("reused entry's key reads %x (ok %v)", w, ok)
	}
	if len(d.free) != 0 || len(d.limbo) != 0 {
		t.Fatalf("%d free and %d waiting entries left", len(d.free), len(d.limbo))
	}
}
