// Package files is the file connector: a streaming source that watches a
// directory (or glob) for new CSV, JSON-lines, Parquet and Arrow IPC files,
// and a file sink that writes Parquet or Arrow IPC files with a manifest
// log, both following Spark's FileStreamSource / FileStreamSink.
//
// Files are decoded with arrow-go's own readers (arrow/csv,
// array.JSONReader, parquet/pqarrow, arrow/ipc). CSV and JSON are
// line-oriented (Spark's default multiLine=false): a file is cut into
// chunks of whole lines, each chunk decoded by one arrow reader; when a
// chunk fails, it is bisected and its halves decoded again, so only the
// malformed lines themselves are decoded one at a time and handled by the
// mode option (PERMISSIVE, DROPMALFORMED, FAILFAST).
//
// Exactly once: the source assigns new files to numbered entries of a
// seen-files log in the query's checkpoint (<checkpoint>/sources/<i>/)
// before the engine logs an offset ({"logOffset":n}) that covers them, so a
// restart replays the same files for an uncommitted epoch and never reads a
// committed file again. The sink writes an epoch's files under their final
// names only after they are complete, then commits the epoch's manifest
// entry (<path>/_arrowstream_metadata/<epoch>); readers that find the
// manifest (this source, batch SELECT) see only committed files.
//
// Install registers the formats in a Session.
package files
