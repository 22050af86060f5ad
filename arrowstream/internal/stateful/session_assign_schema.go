package stateful

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
)

// assignSchemas keeps, across a query's epochs, the output schemas of its
// session window assignments. The engine builds the assignment anew each
// epoch (BuildEpoch), and a new arrow.Schema (its fields copied, its name
// index built as a Go map) was ~6 % of q11's epoch CPU and 4 % of its
// bytes, on pages the harness had handed back to the OS. The plan node's
// own schema does not serve: the engine's input drops the time field's
// watermark metadata that the plan's carries. Schemas are immutable, so
// one made for an equal input and window field serves every epoch.
type assignSchemas struct {
	mu      sync.Mutex // a query's epochs may build their operators concurrently
	entries []assignSchemaEntry
}

type assignSchemaEntry struct {
	in     *arrow.Schema // the assignment's input
	window arrow.Field   // the window field appended to it
	out    *arrow.Schema
}

// maxAssignSchemas bounds the entries: a query has one per session window
// and input schema; past it the oldest entry is dropped.
const maxAssignSchemas = 8

// schema returns in's fields followed by window, with in's metadata: a
// kept schema when one was made for an equal input and field (c nil: a
// new one each call).
func (c *assignSchemas) schema(in *arrow.Schema, window arrow.Field) *arrow.Schema {
	if c == nil {
		return newAssignSchema(in, window)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		if sameSchema(e.in, in) && e.window.Equal(window) {
			return e.out
		}
	}
	out := newAssignSchema(in, window)
	if len(c.entries) == maxAssignSchemas {
		c.entries = append(c.entries[:0], c.entries[1:]...)
	}
	c.entries = append(c.entries, assignSchemaEntry{in: in, window: window, out: out})
	return out
}

// sameSchema reports whether a and b have equal fields (with their
// metadata) and equal schema metadata (arrow's Schema.Equal leaves the
// latter out).
func sameSchema(a, b *arrow.Schema) bool {
	return a == b || a.Equal(b) && a.Metadata().Equal(b.Metadata())
}

func newAssignSchema(in *arrow.Schema, window arrow.Field) *arrow.Schema {
	md := in.Metadata()
	return arrow.NewSchema(append(append([]arrow.Field(nil), in.Fields()...), window), &md)
}
