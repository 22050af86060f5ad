package socket

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// Install registers the "socket" source format with sess.
func Install(sess stream.FormatRegistrar) {
	sess.RegisterSourceFormat("socket", func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (stream.Source, error) {
		o, err := ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		// A declared source comes back with the schema it reported first
		// (arrowstream.SourceFormat): only that schema is accepted.
		if schema != nil && !schema.Equal(Schema(o.IncludeTimestamp)) {
			return nil, fmt.Errorf("socket: the source does not take a user-specified schema (its columns are value and, with includeTimestamp, timestamp)")
		}
		return New(mem, o)
	})
	stream.DeclareSourceOptions(sess, "socket", OptionKeys())
}
