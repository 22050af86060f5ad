package memsink

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// ErrNameTaken is returned by Catalog.Register when a table of that name
// (ignoring case) is already registered.
var ErrNameTaken = errors.New("memsink: table name already registered")

// Catalog maps table names to tables, as Spark's temporary views map query
// names to memory sinks: names are case-insensitive and keep the spelling
// they were registered with. It is safe for concurrent use. The catalog
// does not own its tables: dropping one does not close it.
type Catalog struct {
	mu     sync.RWMutex
	tables map[string]catalogEntry // by folded name
}

type catalogEntry struct {
	name  string
	table *Table
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{tables: map[string]catalogEntry{}} }

func fold(name string) string { return strings.ToLower(name) }

// Register adds t under name. It fails with ErrNameTaken when the name is
// registered (use Replace to swap tables).
func (c *Catalog) Register(name string, t *Table) error {
	if name == "" || t == nil {
		return fmt.Errorf("memsink: register %q: empty name or nil table", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.tables[fold(name)]; ok {
		return fmt.Errorf("%w: %q (as %q)", ErrNameTaken, name, old.name)
	}
	c.tables[fold(name)] = catalogEntry{name: name, table: t}
	return nil
}

// Replace registers t under name and returns the table it replaces, if
// any (Spark's createOrReplaceTempView).
func (c *Catalog) Replace(name string, t *Table) (*Table, error) {
	if name == "" || t == nil {
		return nil, fmt.Errorf("memsink: register %q: empty name or nil table", name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.tables[fold(name)]
	c.tables[fold(name)] = catalogEntry{name: name, table: t}
	return old.table, nil
}

// Lookup returns the table registered under name, ignoring case.
func (c *Catalog) Lookup(name string) (*Table, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.tables[fold(name)]
	return e.table, ok
}

// Drop removes name and returns its table (not closed), if it was
// registered.
func (c *Catalog) Drop(name string) (*Table, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.tables[fold(name)]
	delete(c.tables, fold(name))
	return e.table, ok
}

// List returns the registered names, as registered, sorted ignoring case.
func (c *Catalog) List() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.tables))
	for _, e := range c.tables {
		out = append(out, e.name)
	}
	sort.Slice(out, func(i, j int) bool { return fold(out[i]) < fold(out[j]) })
	return out
}

// HeldBytes is what the catalog's tables hold together: their Arrow
// buffers plus the estimated bookkeeping beside them (Size.Bytes +
// Size.Overhead, what MaxBytes counts). A process's memory target
// (arrowstream.Session.StartMemoryTarget) counts it as held data.
func (c *Catalog) HeldBytes() int64 {
	c.mu.RLock()
	tables := make([]*Table, 0, len(c.tables))
	for _, e := range c.tables {
		tables = append(tables, e.table)
	}
	c.mu.RUnlock()
	var n int64
	for _, t := range tables {
		sz := t.Size()
		n += sz.Bytes + sz.Overhead
	}
	return n
}
