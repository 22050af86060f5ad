package kafka

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// Install registers the "kafka" source and sink formats with sess.
func Install(sess stream.FormatRegistrar) {
	sess.RegisterSourceFormat("kafka", func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (stream.Source, error) {
		o, err := ParseSourceOptions(opts)
		if err != nil {
			return nil, err
		}
		if c, ok := sess.(dialController); ok {
			o.Control = c.DialControl()
		}
		// A declared source comes back with the schema it reported first
		// (arrowstream.SourceFormat): only that schema is accepted.
		if schema != nil && !schema.Equal(Schema(o.IncludeHeaders)) {
			return nil, errUserSchema
		}
		return NewSource(mem, o)
	})
	stream.DeclareSourceOptions(sess, "kafka", SourceOptionKeys())
	sess.RegisterSinkFormat("kafka", func(ctx context.Context, mem memory.Allocator, info stream.SinkInfo) (stream.Sink, error) {
		o, err := ParseSinkOptions(info.Options)
		if err != nil {
			return nil, err
		}
		if c, ok := sess.(dialController); ok {
			o.Control = c.DialControl()
		}
		return NewSink(mem, info.Schema, o)
	})
	stream.DeclareSinkOptions(sess, "kafka", SinkOptionKeys())
}
