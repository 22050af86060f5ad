package arrowstream

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
)

// MemoryStream is the in-memory source for tests, demos and clients that
// push rows (Spark's MemoryStream); see package source/memory.
type MemoryStream = memsource.Stream

// NewMemoryStream returns an empty memory stream of schema.
func NewMemoryStream(mem memory.Allocator, schema *arrow.Schema) *MemoryStream {
	return memsource.New(mem, schema)
}
