// Package connectors installs every built-in source and sink format
// (files, Kafka, socket, console) into a Session, so that
// DataStreamReader/Writer `Format(name)` and SQL `USING name` find them.
//
// The connectors live in their own packages under arrowstream/source and
// arrowstream/sink and import only the contracts (arrowstream/stream);
// each has an Install(stream.FormatRegistrar), which arrowstream.Session
// implements. Programs that want only some formats call those directly.
package connectors
