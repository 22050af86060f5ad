package stream

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// SourceFormat creates a streaming source of a format from options (the
// USING clause of CREATE TABLE, DataStreamReader.Format). schema is the
// user's schema or nil; the sources of a declared table's queries are
// created with the schema its first source reported, which a format with a
// fixed schema must accept.
type SourceFormat func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (Source, error)

// SinkFormat creates a sink for a query (DataStreamWriter.Format).
type SinkFormat func(ctx context.Context, mem memory.Allocator, info SinkInfo) (Sink, error)

// FormatRegistrar is what a connector's Install needs from a session: a
// place to register its formats (arrowstream.Session implements it).
type FormatRegistrar interface {
	RegisterSourceFormat(name string, f SourceFormat)
	RegisterSinkFormat(name string, f SinkFormat)
}

// SinkOptionRegistrar is implemented by a session that rejects unknown
// sink options (arrowstream.Session): TBLPROPERTIES of CREATE STREAMING
// TABLE and DataStreamWriter options are checked against the keys a sink
// format declares there, plus WriterOptionKeys.
type SinkOptionRegistrar interface {
	RegisterSinkOptions(format string, keys []string)
}

// DeclareSinkOptions declares the option keys of a sink format to r if r
// checks options (SinkOptionRegistrar).
func DeclareSinkOptions(r FormatRegistrar, format string, keys []string) {
	if d, ok := r.(SinkOptionRegistrar); ok {
		d.RegisterSinkOptions(format, keys)
	}
}

// SourceOptionRegistrar is implemented by a session that rejects unknown
// source options (arrowstream.Session): a connector's Install declares
// there the option keys its parser reads, when the registrar has it.
type SourceOptionRegistrar interface {
	RegisterSourceOptions(format string, keys []string)
}

// DeclareSourceOptions declares the option keys of a source format to r
// if r checks options (SourceOptionRegistrar).
func DeclareSourceOptions(r FormatRegistrar, format string, keys []string) {
	if d, ok := r.(SourceOptionRegistrar); ok {
		d.RegisterSourceOptions(format, keys)
	}
}
