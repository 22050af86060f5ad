// Package testutil holds the small helpers the SIGKILL crash tests of
// several packages share: starting the child (the test binary re-executed),
// a bounded buffer for its stderr, the check for a child that died of
// SIGKILL, and waits that have no wall-clock limit: Child.Wait and
// Child.WaitUntil give up only when a measure of progress (TreeProgress,
// CountProgress, the child's stderr) stops moving for a stall period, and
// Scaled stretches every bound by ARROWSTREAM_TEST_TIME_SCALE;
// OptionKeysRead lists the option keys a connector's parser reads, for the
// tests that tie them to the keys it declares. It imports
// only the standard library, so any test in the module can use it.
//
// The checked, poisoning test allocator is in the subpackage poisonmem.
package testutil
