// Package layout holds the test that enforces the dependency direction of
// the project's packages (docs/design.md §1): dependencies point down the list
// vector, checkpoint, sql → plan → arrowstream → memsink → streamtest,
// server → cmd, bench, never up.
package layout
