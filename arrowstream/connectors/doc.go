// Package connectors installs every built-in source and sink format
// (files, Kafka, socket, console, foreach, ...) into a Session, so that
// DataStreamReader/Writer `Format(name)` and SQL `USING name` find them.
//
// The connectors live in their own packages under arrowstream/source and
// arrowstream/sink (they import arrowstream, so arrowstream cannot register
// them itself); each has an Install(*arrowstream.Session). Programs that
// want only some formats call those directly.
package connectors
