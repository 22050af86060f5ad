// Command arrowstream is Arrowstream's command-line tool:
//
//	arrowstream <command> [arguments]
//
// Commands:
//
//	conformance [-v] [-run REGEXP] [--conf key=value]... [-restart] [-timeout D] PATH...
//	    runs conformance scenario files (conformance/FORMAT.md): PATH is a
//	    file or a directory of *.json. One line per scenario (PASS name,
//	    FAIL name: first difference, SKIP name: reason), then
//	    "N passed, M failed[, K skipped]". -v prints every step and, on a
//	    failure, the checkpoint logs and sink epochs; -run selects scenarios
//	    by name; --conf sets a query option for every scenario; -restart
//	    also restarts stateful queries after every epoch. Exit status 0
//	    only when no scenario failed (1 when some did, 2 for bad usage).
//
// The run, serve, query and bench commands are placeholders that report
// "not implemented yet"; each command lives in its own file and registers
// in the commands table of main.go.
package main
