package arrowstream

import (
	"slices"
	"testing"
)

// TestCatalogMemorySourceRestart: a streaming table over a USING memory
// source continues after a restart and sees the rows pushed after it.
// The source comes back empty (its rows lived in the old process), and
// without Resume it would number new rows from 0 again, below the offsets
// the table's checkpoint had reached, and the table would skip them.
func TestCatalogMemorySourceRestart(t *testing.T) {
	root := t.TempDir()
	const (
		src  = "CREATE TABLE pushed (value BIGINT) USING memory"
		copy = "CREATE STREAMING TABLE copied TBLPROPERTIES ('trigger' = '10 milliseconds') AS SELECT value FROM STREAM pushed"
	)
	push := func(s *Session, values ...int64) {
		t.Helper()
		st, ok := s.LookupStream("pushed")
		if !ok {
			t.Fatal("no stream pushed")
		}
		ms, ok := st.(*MemoryStream)
		if !ok {
			t.Fatalf("pushed is a %T", st)
		}
		for _, v := range values {
			if _, err := ms.AddData([]any{v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	s1, _ := catalogSession(t, root)
	mustSQL(t, s1, src)
	mustSQL(t, s1, copy)
	push(s1, 1, 2, 3, 4, 5)
	waitFor(t, func() bool { return len(int64s(t, s1, "SELECT value FROM copied")) == 5 })
	s1.Streams().StopAll()

	s2, restored := catalogSession(t, root)
	for _, r := range restored {
		if r.Err != nil {
			t.Fatalf("restore %s: %v", r.Name, r.Err)
		}
	}
	push(s2, 10, 11)
	waitFor(t, func() bool { return len(int64s(t, s2, "SELECT value FROM copied")) == 7 })
	push(s2, 12)
	waitFor(t, func() bool { return len(int64s(t, s2, "SELECT value FROM copied")) == 8 })
	s2.Streams().StopAll()
	got := int64s(t, s2, "SELECT value FROM copied ORDER BY value")
	if want := []int64{1, 2, 3, 4, 5, 10, 11, 12}; !slices.Equal(got, want) {
		t.Fatalf("copied holds %v, want %v", got, want)
	}
}
