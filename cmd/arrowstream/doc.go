// Command arrowstream is Arrowstream's command-line tool:
//
//	arrowstream <command> [arguments]
//
// Commands (each prints its flags and examples with -h; every flag can
// also be set by an ARROWSTREAM_* environment variable, see
// docs/configuration.md):
//
//	run [flags] [FILE.sql ...]
//	    without files, runs the built-in demo (demo.sql: synthetic click
//	    events counted per page in 10-second event-time windows, and the
//	    top pages); with files, runs their statements. Serves Flight SQL
//	    (--addr, 127.0.0.1:31337) and the web UI, JSON API and Prometheus
//	    /metrics (--http, 127.0.0.1:4040), checkpoints under --checkpoint
//	    (default: the user's cache directory; the next run continues from
//	    it), shows a live status, and stops every query cleanly on Ctrl-C.
//
//	serve [flags]
//	    the same servers without the demo: tables are created over
//	    Flight SQL (or by --init files).
//
//	query [--uri grpc://127.0.0.1:31337] [--user U --password P] [--format table|csv|json|arrow] SQL
//	    a Flight SQL client: runs the statements and prints their rows.
//
//	conformance [-v] [-run REGEXP] [--conf key=value]... [-restart] [-timeout D] PATH...
//	    runs conformance scenario files (streamtest/testdata/conformance/FORMAT.md): PATH is a
//	    file or a directory of *.json. One line per scenario (PASS name,
//	    FAIL name: first difference, SKIP name: reason), then
//	    "N passed, M failed[, K skipped]". -v prints every step and, on a
//	    failure, the checkpoint logs and sink epochs; -run selects scenarios
//	    by name; --conf sets a query option for every scenario; -restart
//	    also restarts stateful queries after every epoch. Exit status 0
//	    only when no scenario failed (1 when some did, 2 for bad usage).
//
// Each command lives in its own file and registers in the commands table
// of main.go. Exit status: 0 on success, 1 on a runtime error, 2 for bad
// usage (unknown flags, bad values).
package main
