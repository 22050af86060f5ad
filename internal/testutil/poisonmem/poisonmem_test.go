package poisonmem_test

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// keepAliased is the bug class this allocator exists for: it returns a
// string that aliases the array's buffer, then releases the array.
func keepAliased(mem memory.Allocator, s string) string {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Append(s)
	arr := b.NewStringArray()
	defer arr.Release()
	return arr.Value(0) // aliases the data buffer
}

// TestUseAfterReleaseIsVisible fails on a plain (or merely checked) Go
// allocator, where the released buffer keeps its bytes and the stale
// string still reads "hello, world": only poisoning makes the bug show.
func TestUseAfterReleaseIsVisible(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	got := keepAliased(mem, "hello, world")
	if got == "hello, world" {
		t.Fatal("a string read after its array was released still reads the old bytes: use-after-release went unnoticed")
	}
	if want := strings.Repeat("\xa5", len("hello, world")); got != want {
		t.Fatalf("released bytes = %q, want the pattern %q", got, want)
	}
}

// TestGoAllocatorHidesUseAfterRelease documents why the poisoning is
// needed: the same bug on Arrow's checked Go allocator reads correct data.
func TestGoAllocatorHidesUseAfterRelease(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if got := keepAliased(mem, "hello, world"); got != "hello, world" {
		t.Fatalf("Go allocator: %q (if Arrow ever poisons, this allocator may be simpler)", got)
	}
}

func TestCopiedValueSurvivesRelease(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	if got := strings.Clone(keepAliased(mem, "x")); got == "x" {
		t.Fatal("clone after release must not help: the bytes were already gone")
	}
	b := array.NewStringBuilder(mem)
	b.Append("kept")
	arr := b.NewStringArray()
	b.Release()
	kept := strings.Clone(arr.Value(0))
	arr.Release()
	if kept != "kept" {
		t.Fatalf("copied before release: %q", kept)
	}
}

func TestAllocateZeroedAligned(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	for _, n := range []int{0, 1, 63, 64, 65, 1000} {
		b := mem.Allocate(n)
		if len(b) != n {
			t.Fatalf("Allocate(%d): len %d", n, len(b))
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p%64 != 0 {
			t.Fatalf("Allocate(%d): address %#x not 64-byte aligned", n, p)
		}
		for i, c := range b {
			if c != 0 {
				t.Fatalf("Allocate(%d): byte %d = %#x, want 0", n, i, c)
			}
		}
		mem.Free(b)
	}
}

func TestReallocateMovesAndPoisons(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	b := mem.Allocate(8)
	copy(b, "abcdefgh")
	nb := mem.Reallocate(16, b)
	if string(nb[:8]) != "abcdefgh" || len(nb) != 16 {
		t.Fatalf("Reallocate kept %q (len %d)", nb[:8], len(nb))
	}
	if string(b) != strings.Repeat("\xa5", 8) {
		t.Fatalf("old buffer after Reallocate = %q, want poisoned", b)
	}
	if got := mem.CurrentAlloc(); got != 16 {
		t.Fatalf("CurrentAlloc = %d, want 16", got)
	}
	shrunk := mem.Reallocate(4, nb)
	if string(shrunk) != "abcd" {
		t.Fatalf("shrunk = %q", shrunk)
	}
	mem.Free(shrunk)
}

func TestDoubleFreePanics(t *testing.T) {
	mem := poisonmem.New()
	b := mem.Allocate(10)
	mem.Free(b)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "not a live buffer") {
			t.Fatalf("second Free: recovered %v, want a panic naming the double free", r)
		}
	}()
	mem.Free(b)
}

type recorder struct{ msgs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

//go:noinline
func leakSomething(mem memory.Allocator) *array.Int64 {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues([]int64{1, 2, 3}, nil)
	return b.NewInt64Array()
}

func TestLeakReportNamesAllocationSite(t *testing.T) {
	mem := poisonmem.New()
	arr := leakSomething(mem)
	var r recorder
	mem.AssertSize(&r, 0)
	if len(r.msgs) != 1 {
		t.Fatalf("AssertSize reported %d failures, want 1", len(r.msgs))
	}
	msg := r.msgs[0]
	for _, want := range []string{"LEAK of", "leakSomething", "poisonmem_test.go"} {
		if !strings.Contains(msg, want) {
			t.Errorf("leak report lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "arrow/memory.") {
		t.Errorf("leak report shows Arrow's allocator frames:\n%s", msg)
	}
	arr.Release()
	r.msgs = nil
	mem.AssertSize(&r, 0)
	if len(r.msgs) != 0 {
		t.Fatalf("after release: %v", r.msgs)
	}
}

// asFuzzWorker makes the test binary look like a fuzzing worker (the
// -test.fuzzworker flag go test -fuzz passes) until tb ends.
func asFuzzWorker(tb testing.TB) {
	f := flag.Lookup("test.fuzzworker")
	if f == nil {
		tb.Fatal("testing registers no -test.fuzzworker flag")
	}
	old := f.Value.String()
	if err := f.Value.Set("true"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = f.Value.Set(old) })
}

// TestFuzzWorkerLeakReportWithoutStacks: in a fuzzing worker the
// allocator does not record stacks (they were most of FuzzExprEval's
// execution time), yet a leak still fails, and says how to see where.
func TestFuzzWorkerLeakReportWithoutStacks(t *testing.T) {
	asFuzzWorker(t)
	mem := poisonmem.New()
	arr := leakSomething(mem)
	defer arr.Release()
	var r recorder
	mem.AssertSize(&r, 0)
	if len(r.msgs) != 1 {
		t.Fatalf("AssertSize reported %d failures, want 1", len(r.msgs))
	}
	msg := r.msgs[0]
	for _, want := range []string{"LEAK of", "go test -run"} {
		if !strings.Contains(msg, want) {
			t.Errorf("leak report lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "leakSomething") {
		t.Errorf("a fuzzing worker's leak report lists a stack it should not have recorded:\n%s", msg)
	}
}

func TestConcurrentUse(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				b := mem.Allocate(i + 1)
				b = mem.Reallocate(i+10, b)
				mem.Free(b)
			}
		}()
	}
	wg.Wait()
}
