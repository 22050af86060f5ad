package hugeheap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseMapping(t *testing.T) {
	for _, c := range []struct {
		line string
		want mapping
		ok   bool
	}{
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", mapping{span{0xc000000000, 0xc004000000}, true, false}, true},
		{"7f0a1c000000-7f0a1c021000 rw-p 00000000 00:00 0", mapping{span{0x7f0a1c000000, 0x7f0a1c021000}, true, false}, true},
		{"c000000000-c004000000 rw-p 00000000 00:00 0                          [anon: Go: heap]", mapping{span{0xc000000000, 0xc004000000}, true, true}, true},
		{"c004000000-c008000000 ---p 00000000 00:00 0                          [anon: Go: heap]", mapping{span{0xc004000000, 0xc008000000}, false, true}, true},
		{"7f0a1c000000-7f0a1c021000 rw-p 00000000 00:00 0   [anon: Go: page summary]", mapping{span{0x7f0a1c000000, 0x7f0a1c021000}, true, false}, true},
		{"7f0a1c021000-7f0a20000000 ---p 00000000 00:00 0", mapping{span{0x7f0a1c021000, 0x7f0a20000000}, false, false}, true},
		{"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/arrowstream", mapping{}, false},
		{"0064a000-0066c000 rw-p 0024a000 08:02 173521      /usr/bin/arrowstream", mapping{}, false},
		{"01a8f000-01ab0000 rw-p 00000000 00:00 0          [heap]", mapping{}, false},
		{"7ffd3e5f0000-7ffd3e611000 rw-p 00000000 00:00 0  [stack]", mapping{}, false},
		{"7f0a1c000000-7f0a1c021000 rw-s 00000000 00:05 42 /dev/zero (deleted)", mapping{}, false},
		{"7f0a1c000000-7f0a1c021000 r--p 00000000 00:00 0", mapping{}, false},
		{"garbage", mapping{}, false},
		{"", mapping{}, false},
	} {
		m, ok := parseMapping([]byte(c.line))
		if m != c.want || ok != c.ok {
			t.Errorf("parseMapping(%q) = %+v, %v; want %+v, %v", c.line, m, ok, c.want, c.ok)
		}
	}
}

// A maps file as Go 1.26 leaves it on a kernel that does not name
// anonymous memory: the binary and its bss, the heap's arenas (a
// randomised base: PROT_NONE below the first mapped chunk, the rest of
// the reservation PROT_NONE), the runtime's metadata (the arena index,
// page summaries with mapped islands), and a mapping of someone else's
// right after the heap's reservation (not a whole arena: cut away).
const mapsNoNames = `00400000-006d8000 r-xp 00000000 fe:00 10347566   /tmp/x.test
006d8000-006fc000 rw-p 002d8000 fe:00 10347566   /tmp/x.test
006fc000-02735000 rw-p 00000000 00:00 0 
f8128000000-f8128c00000 ---p 00000000 00:00 0 
f8128c00000-f812e000000 rw-p 00000000 00:00 0 
f812e000000-f8133000000 rw-p 00000000 00:00 0 
f8133000000-f8134000000 ---p 00000000 00:00 0 
f8134000000-f8134100000 rw-p 00000000 00:00 0 
7ff205420000-7ff205600000 rw-p 00000000 00:00 0 
7ff205600000-7ff207600000 rw-p 00000000 00:00 0 
7ff207600000-7ff219502000 ---p 00000000 00:00 0 
7ff219502000-7ff219503000 rw-p 00000000 00:00 0 
7ff219503000-7ff239502000 ---p 00000000 00:00 0 
7ffe0b671000-7ffe0b692000 rw-p 00000000 00:00 0   [stack]
`

func TestHeapSpans(t *testing.T) {
	heap := []span{{0xf8128c00000, 0xf812e000000}, {0xf812e000000, 0xf8133000000}}
	for _, c := range []struct {
		name    string
		maps    string
		anchors []uintptr
		want    []span
	}{
		{"anchored", mapsNoNames, []uintptr{0xf8130001234}, heap},
		{"anchor in the first mapping", mapsNoNames, []uintptr{0xf8128c00000}, heap},
		// The metadata's run holds no whole arena; the bss holds no
		// anchor: nothing.
		{"no anchor in the heap", mapsNoNames, []uintptr{0x7ff205600010, 0x700000}, nil},
		{"no anchor", mapsNoNames, nil, nil},
		{"named", "c000000000-c004000000 rw-p 00000000 00:00 0 [anon: Go: heap]\n" +
			"c004000000-c008000000 ---p 00000000 00:00 0 [anon: Go: heap]\n" +
			"7ff205600000-7ff207600000 rw-p 00000000 00:00 0 [anon: Go: page summary]\n" +
			"7ff207600000-7ff207800000 rw-p 00000000 00:00 0\n",
			nil, []span{{0xc000000000, 0xc004000000}}},
		// A run that starts mid-arena and ends past the heap's last
		// arena is cut to whole arenas.
		{"cut to arenas", "f8127f00000-f8128c00000 rw-p 00000000 00:00 0\n" +
			"f8128c00000-f8134100000 rw-p 00000000 00:00 0\n",
			[]uintptr{0xf8130000000}, []span{{0xf8128000000, 0xf8128c00000}, {0xf8128c00000, 0xf8134000000}}},
	} {
		got := heapSpans([]byte(c.maps), c.anchors)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: heapSpans = %x, want %x", c.name, got, c.want)
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
	a, err := Start(Options{ModeFile: f})
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
	_, err := Start(Options{ModeFile: f})
	if err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("Start with an unbracketed mode: error %v, want one naming %s", err, f)
	}
}

func TestInactiveModesAdviseNothing(t *testing.T) {
	for _, mode := range []string{"always madvise [never]", "[always] madvise never"} {
		a, err := Start(Options{ModeFile: writeMode(t, mode)})
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
