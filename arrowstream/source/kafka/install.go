package kafka

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// Install registers the "kafka" source and sink formats with sess.
func Install(sess *arrowstream.Session) {
	sess.RegisterSourceFormat("kafka", func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (arrowstream.Source, error) {
		if schema != nil {
			return nil, errUserSchema
		}
		o, err := ParseSourceOptions(opts)
		if err != nil {
			return nil, err
		}
		return NewSource(mem, o)
	})
	sess.RegisterSinkFormat("kafka", func(ctx context.Context, mem memory.Allocator, info arrowstream.SinkInfo) (arrowstream.Sink, error) {
		o, err := ParseSinkOptions(info.Options)
		if err != nil {
			return nil, err
		}
		return NewSink(mem, info.Schema, o)
	})
}
