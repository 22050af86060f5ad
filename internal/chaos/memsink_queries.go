package chaos

import (
	"errors"
	"fmt"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// memsinkQueries are the running queries of a workload whose outputs are
// memory-sink tables, and the catalog the tables are in (the memsink and
// stateful workloads).
type memsinkQueries struct {
	cat     *memsink.Catalog
	queries []*arrowstream.StreamingQuery
}

// failed names the first query that is no longer active, with its error.
func (m *memsinkQueries) failed() error {
	for _, q := range m.queries {
		if !q.IsActive() {
			return fmt.Errorf("chaos: query %s stopped: %w", q.Name(), q.Exception())
		}
	}
	return nil
}

// stop stops every query, then drops and closes the tables named.
func (m *memsinkQueries) stop(tables []string) error {
	var errs []error
	for _, q := range m.queries {
		if err := q.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range tables {
		if t, ok := m.cat.Drop(name); ok {
			t.Close()
		}
	}
	return errors.Join(errs...)
}

// read reads each named table's snapshot into an Output keyed by the
// table's key column and weighted by its weight column (weight "": 1 a
// row); a table not in the catalog yet reads as empty.
func (m *memsinkQueries) read(tables []string, key, weight func(table string) string) (Result, error) {
	res := Result{}
	for _, name := range tables {
		out := Output{}
		res[name] = out
		t, ok := m.cat.Lookup(name)
		if !ok {
			continue
		}
		snap := t.Snapshot()
		err := addRows(out, snap.Records(), key(name), weight(name))
		snap.Release()
		if err != nil {
			return nil, fmt.Errorf("chaos: read table %s: %w", name, err)
		}
	}
	return res, nil
}
