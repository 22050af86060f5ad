// Package testutil holds the small helpers the SIGKILL crash tests of
// several packages share: starting the child (the test binary re-executed),
// a bounded buffer for its stderr and the check for a child that died of
// SIGKILL. It imports only the standard
// library, so any test in the module can use it.
package testutil
