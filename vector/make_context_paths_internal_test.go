package vector

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMakeContextPathsAgree: the runtime allocator's path (unzeroed
// memory, zeroed a chunk at a time) and the fallback's (make) give the
// same slice after the caller's copy, for sizes around the large-array
// threshold; both stop on a cancelled context.
func TestMakeContextPathsAgree(t *testing.T) {
	for _, c := range []int{bigAllocBytes / 8, bigAllocBytes/8 + 3, 3 << 20} {
		n := c / 3
		old := make([]int64, n)
		for i := range old {
			old[i] = int64(i*7 + 1)
		}
		// Dirty the heap so that reused memory holds non-zero bytes.
		for range 4 {
			junk := unzeroedSlice[int64](c)
			for i := range junk {
				junk[i] = -1
			}
			runtime.KeepAlive(junk)
		}
		runtime.GC()
		var got [2][]int64
		for k, alloc := range []func(int) []int64{unzeroedSlice[int64], zeroedSlice[int64]} {
			s, err := makeContextWith(context.Background(), n, c, alloc)
			if err != nil {
				t.Fatal(err)
			}
			if len(s) != n || cap(s) != c {
				t.Fatalf("len %d cap %d, want %d %d", len(s), cap(s), n, c)
			}
			copy(s, old)
			got[k] = s[:c]
			if i := slices.IndexFunc(got[k][n:], func(x int64) bool { return x != 0 }); i >= 0 {
				t.Fatalf("path %d: element %d past the copy is %d, want 0", k, n+i, got[k][n+i])
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := makeContextWith(ctx, n, c, alloc); !errors.Is(err, context.Canceled) {
				t.Fatalf("path %d: cancelled: err = %v", k, err)
			}
		}
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("size %d: the runtime and fallback paths differ", c)
		}
	}
}

// TestMakeContextPathSelected: on the Go releases whose runtime.mallocgc
// signature was checked (1.23 to 1.27) the default build uses it. On a
// later release the build falls back to make by itself; this test then
// fails so that the signature is checked again and the range in
// make_context_runtime.go widened (or the fallback kept on purpose).
func TestMakeContextPathSelected(t *testing.T) {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		t.Skipf("Go version %q: not a release", runtime.Version())
	}
	minor, err := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err != nil || parts[0] != "1" {
		t.Skipf("Go version %q: not a release", runtime.Version())
	}
	checked := minor >= 23 && minor <= 27
	if !checked && runtimeAlloc {
		t.Fatalf("%s links runtime.mallocgc outside the checked releases", runtime.Version())
	}
	if checked && !runtimeAlloc && !nolinknameTag {
		t.Fatalf("%s is a checked release but the build uses the fallback", runtime.Version())
	}
	if !checked {
		t.Fatalf("%s: runtime.mallocgc not checked on this release; large arrays use make (a cancel waits for its zeroing): check its signature and widen the build constraint", runtime.Version())
	}
}
