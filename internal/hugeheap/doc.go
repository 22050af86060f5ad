// Package hugeheap asks the kernel to back the Go heap with transparent
// huge pages (madvise MADV_HUGEPAGE on the heap arenas' read-write
// mappings, found as maps.go's heapSpans says), and advises again as the
// heap grows. Only the heap: the runtime's metadata mappings, the bss and
// other anonymous memory are touched sparsely, and a huge page there
// makes 2 MB resident for a few bytes used (session 25 advised every
// anonymous mapping, those among them, and overrode the runtime's own
// MADV_NOHUGEPAGE on GC metadata).
//
// Why: Go (1.26) does not advise its heap arenas, and with the kernel's
// THP setting at "madvise" an unadvised page is faulted in 4 KB at a
// time; a first touch costs 13–23 µs on the project's machines against
// 0.3–1 µs per 4 KB inside an advised region, where one fault maps 2 MB.
// A process that returns its heap to the OS (debug.FreeOSMemory, the
// scavenger) and grows again pays those first touches again: the
// benchmark harness does so before every measured run.
//
// The advice is a flag on the kernel's VMA, so it survives the runtime
// releasing pages (MADV_DONTNEED) but not a new mapping: when the heap
// grows the runtime maps fresh address space, which the Advisor finds
// after runtime/metrics' /memory/classes/total:bytes grew. It checks that
// on a timer that starts at Options.Interval and backs off to
// Options.MaxInterval while nothing grows, so an idle process wakes
// rarely.
//
// Trade-offs: a huge page faults 2 MB at once, so the resident set can
// run ahead of what is touched; with the kernel's defrag at "madvise" a
// huge fault may compact memory synchronously (a latency spike when
// memory is fragmented); khugepaged may collapse advised ranges in the
// background. The advice is process-wide: one Advisor per process,
// started by the program (the bench, a server), never by a library on its
// own. It is a no-op where THP is "never" or "always" (nothing to
// advise), and an error names the sysfs file when it cannot be read.
// Elsewhere than Linux Start returns ErrUnsupported.
package hugeheap
