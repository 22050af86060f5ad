// Package chaos is the crash harness: it runs a checkpointed streaming
// workload in a child process, kills the child with SIGKILL at seeded
// random moments — from inside checkpoint writes (at each step of an
// atomic write: before the temp write, after it, after the rename, before
// the directory fsync) and from a timer — restarts it, and at the end
// compares the workload's outputs with those of an uninterrupted run, as
// multisets. Nothing may be lost and nothing counted twice.
//
// The parent side is Run; the child side is RunWorker, reached through a
// re-execution of a binary that calls MaybeRunWorker early (the arrowstream
// command's hidden `chaos --worker` mode, or a test binary's TestMain).
// Workloads (NewWorkload) plug in behind the Workload interface.
//
// The package sits beside cmd in the dependency order: it imports
// arrowstream, memsink and checkpoint and nothing imports it except the
// command and its own tests.
package chaos
