// Package console is the console sink (Spark's "console" format): each
// epoch's output is printed as a "Batch: N" header followed by an ASCII
// table in the layout of Spark's Dataset.show, for demos and debugging.
//
// Writer options: numRows (rows shown per epoch, default 20) and truncate
// (default true: cells longer than 20 characters are cut to 17 plus
// "..."; false shows whole cells, left-aligned). Output goes to os.Stdout
// unless Options.Out names another writer.
//
// Like Spark's, the console sink is not idempotent: an epoch that is
// re-run after a failure or restart is printed again.
package console
