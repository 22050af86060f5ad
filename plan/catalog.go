package plan

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// ErrTableNotFound is returned (wrapped) by Catalog.Table for an unknown
// name.
var ErrTableNotFound = errors.New("table or view not found")

// Catalog resolves table names. Names are compared case-insensitively;
// a qualified name is passed joined with dots (system.streaming_queries).
// Implementations are safe for concurrent use.
type Catalog interface {
	// Table returns the table called name, or an error wrapping
	// ErrTableNotFound.
	Table(name string) (Table, error)
}

// TableLister is a Catalog that can list its tables, for "did you mean"
// suggestions.
type TableLister interface {
	TableNames() []string
}

// Table is a catalog entry: a source, a static table or a sink table.
type Table interface {
	// Schema is the table's schema.
	Schema() *arrow.Schema
	// Streaming reports whether the table is a streaming source, read with
	// STREAM name (and by the DataFrame API's Read).
	Streaming() bool
}

// BatchTable is a Table that can be read as a batch.
type BatchTable interface {
	Table
	// Scan returns the table's current rows (a consistent snapshot) as an
	// operator the caller owns.
	Scan(ctx context.Context, mem memory.Allocator) (vector.Operator, error)
}

// VersionedTable is a Table that can be read as of a version (VERSION AS
// OF n; for a sink table, an epoch).
type VersionedTable interface {
	Table
	ScanVersion(ctx context.Context, mem memory.Allocator, version int64) (vector.Operator, error)
}

// ChangesTable is a Table whose committed changes can be read
// (table_changes(name, from[, to])): the rows committed after epoch from
// up to epoch to (to < 0: the latest), with the table's columns followed by
// _epoch (bigint) and _commit_timestamp (timestamp), in ChangesSchema.
type ChangesTable interface {
	Table
	ScanChanges(ctx context.Context, mem memory.Allocator, from, to int64) (vector.Operator, error)
}

// The extra columns of table_changes.
const (
	EpochColumn           = "_epoch"
	CommitTimestampColumn = "_commit_timestamp"
)

// ChangesSchema is the schema of table_changes over a table of schema s.
func ChangesSchema(s *arrow.Schema) *arrow.Schema {
	fields := append(append([]arrow.Field(nil), s.Fields()...),
		arrow.Field{Name: EpochColumn, Type: vector.Int64},
		arrow.Field{Name: CommitTimestampColumn, Type: vector.Timestamp})
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// MemoryCatalog is a simple Catalog of registered tables, for static
// tables, tests and embedding. The zero value is not usable; use
// NewMemoryCatalog.
type MemoryCatalog struct {
	mu     sync.RWMutex
	tables map[string]Table
	names  map[string]string // lower-case → as registered
}

// NewMemoryCatalog returns an empty catalog.
func NewMemoryCatalog() *MemoryCatalog {
	return &MemoryCatalog{tables: map[string]Table{}, names: map[string]string{}}
}

// Register adds or replaces a table.
func (c *MemoryCatalog) Register(name string, t Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := strings.ToLower(name)
	c.tables[k] = t
	c.names[k] = name
}

// Drop removes a table; it reports whether it existed.
func (c *MemoryCatalog) Drop(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := strings.ToLower(name)
	_, ok := c.tables[k]
	delete(c.tables, k)
	delete(c.names, k)
	return ok
}

// Table implements Catalog.
func (c *MemoryCatalog) Table(name string) (Table, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t, ok := c.tables[strings.ToLower(name)]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrTableNotFound, vector.QuoteIdent(name))
}

// TableNames implements TableLister (sorted).
func (c *MemoryCatalog) TableNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.names))
	for _, n := range c.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// MemTable is an in-memory batch table over fixed records (static tables
// of tests and of the conformance scenarios). It retains the records;
// Release releases them.
type MemTable struct {
	schema  *arrow.Schema
	records []arrow.Record
}

// NewMemTable returns a table over records (borrowed and retained), which
// must all have schema.
func NewMemTable(schema *arrow.Schema, records ...arrow.Record) (*MemTable, error) {
	for i, r := range records {
		if !r.Schema().Equal(schema) {
			return nil, fmt.Errorf("plan: table record %d has schema %s, want %s", i, r.Schema(), schema)
		}
	}
	for _, r := range records {
		r.Retain()
		vector.SettleNullCounts(r) // concurrent queries read it: see vector.SettleNullCounts
	}
	return &MemTable{schema: schema, records: append([]arrow.Record(nil), records...)}, nil
}

// Schema implements Table.
func (t *MemTable) Schema() *arrow.Schema { return t.schema }

// Streaming implements Table: a MemTable is static.
func (t *MemTable) Streaming() bool { return false }

// Scan implements BatchTable.
func (t *MemTable) Scan(context.Context, memory.Allocator) (vector.Operator, error) {
	return vector.NewScan(t.schema, t.records...)
}

// Release releases the records.
func (t *MemTable) Release() {
	for _, r := range t.records {
		r.Release()
	}
	t.records = nil
}

// SourceTable is a schema-only streaming table: what a streaming source
// registers so that queries over it analyze. The streaming engine supplies
// the data of each epoch.
type SourceTable struct {
	TableSchema *arrow.Schema
}

// Schema implements Table.
func (t *SourceTable) Schema() *arrow.Schema { return t.TableSchema }

// Streaming implements Table.
func (t *SourceTable) Streaming() bool { return true }
