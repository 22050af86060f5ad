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
		s.RegisterSourceFormat(string(f), SourceFormat(f))
	}
	for _, f := range []Format{Parquet, Arrow} {
		s.RegisterSinkFormat(string(f), SinkFormat(f))
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
