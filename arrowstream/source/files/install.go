package files

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// Install registers the source formats csv, json, parquet and arrow and
// the sink formats parquet and arrow in s.
func Install(s stream.FormatRegistrar) {
	for _, f := range []Format{CSV, JSON, Parquet, Arrow} {
		s.RegisterSourceFormat(string(f), confinedSourceFormat(f, s))
		stream.DeclareSourceOptions(s, string(f), SourceOptionKeys())
	}
	for _, f := range []Format{Parquet, Arrow} {
		s.RegisterSinkFormat(string(f), SinkFormat(f))
		stream.DeclareSinkOptions(s, string(f), SinkOptionKeys())
	}
}

// SourceFormat is the arrowstream.SourceFormat of file format f.
func SourceFormat(f Format) stream.SourceFormat {
	return func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (stream.Source, error) {
		o, err := ParseOptions(f, opts)
		if err != nil {
			return nil, err
		}
		return NewSource(mem, schema, o)
	}
}

// SinkFormat is the arrowstream.SinkFormat of file format f.
func SinkFormat(f Format) stream.SinkFormat {
	return func(_ context.Context, mem memory.Allocator, info stream.SinkInfo) (stream.Sink, error) {
		o, err := ParseSinkOptions(f, info.Options)
		if err != nil {
			return nil, err
		}
		return NewSink(mem, info.Schema, info.Mode, o)
	}
}

// dataConfiner is implemented by registrars that confine the files SQL
// may read (arrowstream.Session, with an access policy): every file a
// listing finds is vetted, so that a symbolic link planted after the table
// was created cannot lead out of the allowed directories.
type dataConfiner interface {
	ConfineDataFile(path string) error
}

// confinedSourceFormat is SourceFormat(f) with listings confined by r when
// it is a dataConfiner.
func confinedSourceFormat(f Format, r stream.FormatRegistrar) stream.SourceFormat {
	c, ok := r.(dataConfiner)
	if !ok {
		return SourceFormat(f)
	}
	return func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (stream.Source, error) {
		o, err := ParseOptions(f, opts)
		if err != nil {
			return nil, err
		}
		o.Confine = c.ConfineDataFile
		return NewSource(mem, schema, o)
	}
}
