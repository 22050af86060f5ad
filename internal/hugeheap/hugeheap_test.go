package hugeheap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseAnon(t *testing.T) {
	for _, c := range []struct {
		line       string
		start, end uintptr
		ok         bool
	}{
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", 0xc000000000, 0xc004000000, true},
		{"7f0a1c000000-7f0a1c021000 rw-p 00000000 00:00 0", 0x7f0a1c000000, 0x7f0a1c021000, true},
		{"c000000000-c004000000 rw-p 00000000 00:00 0                          [anon: Go: heap]", 0xc000000000, 0xc004000000, true},
		{"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/arrowstream", 0, 0, false},
		{"0064a000-0066c000 rw-p 0024a000 08:02 173521      /usr/bin/arrowstream", 0, 0, false},
		{"01a8f000-01ab0000 rw-p 00000000 00:00 0          [heap]", 0, 0, false},
		{"7ffd3e5f0000-7ffd3e611000 rw-p 00000000 00:00 0  [stack]", 0, 0, false},
		{"7f0a1c021000-7f0a20000000 ---p 00000000 00:00 0", 0, 0, false},
		{"7f0a1c000000-7f0a1c021000 rw-s 00000000 00:05 42 /dev/zero (deleted)", 0, 0, false},
		{"garbage", 0, 0, false},
		{"", 0, 0, false},
	} {
		s, e, ok := parseAnon([]byte(c.line))
		if s != c.start || e != c.end || ok != c.ok {
			t.Errorf("parseAnon(%q) = %#x, %#x, %v; want %#x, %#x, %v", c.line, s, e, ok, c.start, c.end, c.ok)
		}
	}
}

func writeMode(t *testing.T, mode string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "enabled")
	if err := os.WriteFile(f, []byte(mode+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestMissingModeFileNamesIt(t *testing.T) {
	f := filepath.Join(t.TempDir(), "no-such-enabled")
	a, err := Start(Options{enabledFile: f})
	if err == nil {
		a.Stop()
		t.Fatal("Start with a missing mode file: no error")
	}
	if !strings.Contains(err.Error(), f) {
		t.Errorf("error %q does not name %s", err, f)
	}
}

func TestBadModeFileNamesIt(t *testing.T) {
	f := writeMode(t, "madvise")
	_, err := Start(Options{enabledFile: f})
	if err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("Start with an unbracketed mode: error %v, want one naming %s", err, f)
	}
}

func TestInactiveModesAdviseNothing(t *testing.T) {
	for _, mode := range []string{"always madvise [never]", "[always] madvise never"} {
		a, err := Start(Options{enabledFile: writeMode(t, mode)})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		st := a.Stats()
		if st.Active || st.Passes != 0 || st.Calls != 0 {
			t.Errorf("%s: %+v, want inactive with no pass", mode, st)
		}
		if grew, err := a.Check(); grew || err != nil {
			t.Errorf("%s: Check = %v, %v; want false, nil", mode, grew, err)
		}
		a.Stop()
	}
	var nilA *Advisor
	nilA.Stop()
}
