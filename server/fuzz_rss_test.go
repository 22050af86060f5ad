package server

import (
	"runtime/debug"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// fuzzRSSMargin is what the fuzz process may hold over its resident set
// at the start plus the per-query memory limit: the runtime, the fuzzer's
// own tables and the corpus. Under the race detector its shadow memory
// (several bytes per heap byte, not returned) multiplies it.
const fuzzRSSMargin = 256 << 20

// selfRSS is this process's resident set in bytes (/proc/self/status
// VmRSS), or an error where the OS does not tell.
func selfRSS() (int64, error) { return testutil.VmRSS(0) }

// rssBound is the most the fuzz process may hold after an input: where it
// started, plus the memory limit its statements run under, plus the
// margin (0: no bound, the OS does not tell).
func (fx *fuzzFixture) rssBound() int64 {
	if fx.startRSS == 0 {
		return 0
	}
	margin := int64(fuzzRSSMargin)
	if raceEnabled {
		margin *= 8
	}
	return fx.startRSS + fx.srv.cfg.Limits.QueryMemoryBytes + margin
}

// checkRSS fails the input when the process's resident set stays over
// rssBound once free memory is returned to the OS: an input that left
// memory held (a leak past the Arrow allocator's count, a table grown
// without bound) rather than one whose garbage is not collected yet.
func (fx *fuzzFixture) checkRSS(t *testing.T, what string) {
	t.Helper()
	bound := fx.rssBound()
	if bound == 0 {
		return
	}
	if rss, over := rssOver(bound); over {
		t.Fatalf("%s: resident set %d MiB after returning free memory, over the bound of %d MiB (start %d MiB + --query-memory %d MiB + margin)",
			what, rss>>20, bound>>20, fx.startRSS>>20, fx.srv.cfg.Limits.QueryMemoryBytes>>20)
	}
}

// rssOver tells whether the resident set is over bound even after free
// memory is returned to the OS. The costly return runs only when the
// cheap reading is over, so the check cannot fail on timing.
func rssOver(bound int64) (int64, bool) {
	rss, err := selfRSS()
	if err != nil || rss <= bound {
		return rss, false
	}
	debug.FreeOSMemory()
	rss, err = selfRSS()
	return rss, err == nil && rss > bound
}

// TestFuzzRSSBound: the bound the fuzz targets assert is set above the
// start plus the memory limit, the fixture alone is within it, and a
// resident set over a bound is reported.
func TestFuzzRSSBound(t *testing.T) {
	if _, err := selfRSS(); err != nil {
		t.Skipf("no resident set to read here: %v", err)
	}
	fx := newFuzzFixture(t)
	b := fx.rssBound()
	if fx.startRSS <= 0 || b <= fx.startRSS+fx.srv.cfg.Limits.QueryMemoryBytes {
		t.Fatalf("start %d, bound %d", fx.startRSS, b)
	}
	fx.checkRSS(t, "idle")
	if rss, over := rssOver(1 << 20); !over {
		t.Fatalf("a resident set of %d bytes is not over 1 MiB", rss)
	}
	if rss, over := rssOver(1 << 50); over {
		t.Fatalf("a resident set of %d bytes is over 1 PiB", rss)
	}
}
