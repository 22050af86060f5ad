// Package poisonmem is the allocator every test in the module runs on: a
// checked allocator (it tracks each live buffer with the stack that
// allocated it, and AssertSize reports leaks with those stacks) that
// poisons memory on release. In a fuzzing worker (go test -fuzz) it skips
// the stacks, which cost most of an execution there; a leak still fails the
// input, and running the saved input with go test -run lists them.
//
// On Free (and on the old buffer of a Reallocate, which always moves) it
// overwrites the bytes with Pattern and forgets the buffer. It never hands
// the same memory out again while anything can still reach it: buffers are
// plain Go memory, so the garbage collector keeps a buffer that a stale
// string, slice or array still points into, and a fresh allocation is
// always new memory. A value read after its array was released therefore
// reads Pattern bytes (0xA5): strings come out as garbage, offsets as huge
// negative numbers that panic on slicing, validity bits as noise. That turns
// a use-after-release, which on a plain Go allocator silently reads the old
// bytes, into a wrong answer or a crash in the test that has it.
//
// A pooling allocator stacked on top would recycle freed buffers without
// ever calling Free here, hiding exactly these bugs; vector.PoolAllocator
// therefore passes every buffer straight through to an underlying allocator
// that reports Poisons() == true.
package poisonmem
