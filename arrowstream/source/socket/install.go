package socket

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// Install registers the "socket" source format with sess.
func Install(sess *arrowstream.Session) {
	sess.RegisterSourceFormat("socket", func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (arrowstream.Source, error) {
		if schema != nil {
			return nil, fmt.Errorf("socket: the source does not take a user-specified schema (its columns are value and, with includeTimestamp, timestamp)")
		}
		o, err := ParseOptions(opts)
		if err != nil {
			return nil, err
		}
		return New(mem, o)
	})
}
