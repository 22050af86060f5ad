// Package socket is Spark's text socket source (format "socket"): it
// connects to host:port and turns each line it reads into a row with one
// string column, value (and a timestamp column, the time the line was
// read, with includeTimestamp).
//
// It is for demos and tests, like Spark's, and is NOT fault tolerant: the
// lines live only in memory until their epoch is committed. Lines read
// before a crash or a stop that were not yet in a committed epoch are
// lost, and so is the epoch that was running at the crash; a restarted
// query goes on with the lines that arrive on its new connection. Every
// offset names the connection it belongs to ({"run":"…","offset":n}), so
// that a restarted source never mistakes old offsets for its own lines.
//
// Lines are buffered between triggers up to maxBufferedLines; when the
// buffer is full the source stops reading from the connection, so a fast
// writer is slowed down by TCP flow control rather than filling memory.
package socket
