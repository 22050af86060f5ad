package streamtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
)

// Source is an in-memory stream of the fixture (Spark's MemoryStream):
// each AddData is one offset, also when it has no rows.
type Source struct {
	name   string
	index  int
	stream *arrowstream.MemoryStream
	gate   *gate
}

// Name is the table name the query reads the source by.
func (src *Source) Name() string { return src.name }

// Schema is the source's schema.
func (src *Source) Schema() *arrow.Schema { return src.stream.Schema() }

// AddSource registers an in-memory stream readable as the streaming table
// name.
func (s *Stream) AddSource(name string, schema *arrow.Schema) (*Source, error) {
	for _, src := range s.sources {
		if strings.EqualFold(src.name, name) {
			return nil, fmt.Errorf("streamtest: source %s is already defined", name)
		}
	}
	src := &Source{name: name, index: len(s.sources), stream: arrowstream.NewMemoryStream(s.mem, schema), gate: s.gate}
	s.gate.add()
	s.sources = append(s.sources, src)
	s.sess.RegisterStream(name, &gatedSource{src: src})
	return src, nil
}

// MustAddSource is AddSource for tests; it panics on a duplicate name.
func (s *Stream) MustAddSource(name string, schema *arrow.Schema) *Source {
	src, err := s.AddSource(name, schema)
	if err != nil {
		panic(err)
	}
	return src
}

// gate publishes the offsets of the fixture's sources so that the data of
// one MultiAddData lands in one epoch. The engine asks each of a query's
// sources for its latest offset once per trigger, one after the other; a
// source answers from a view of all published offsets that is refreshed
// when a source asks a second time since the view was taken, which is the
// start of the next trigger (and at the very first ask). A publish between two sources' answers
// in one trigger therefore reaches the query in the next trigger, whole.
type gate struct {
	mu        sync.Mutex
	published []arrowstream.Offset
	view      []arrowstream.Offset
	asked     []bool // the source has answered from the current view
}

func newGate() *gate { return &gate{} }

func (g *gate) add() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.published = append(g.published, nil)
	g.view = append(g.view, nil)
	g.asked = append(g.asked, false)
}

// publish makes the given offsets (by source index) visible together.
func (g *gate) publish(offsets map[int]arrowstream.Offset) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, o := range offsets {
		g.published[i] = o
	}
}

func (g *gate) latest(i int) arrowstream.Offset {
	g.mu.Lock()
	defer g.mu.Unlock()
	fresh := true
	for _, a := range g.asked {
		fresh = fresh && !a
	}
	if g.asked[i] || fresh {
		copy(g.view, g.published)
		for j := range g.asked {
			g.asked[j] = false
		}
	}
	g.asked[i] = true
	return g.view[i]
}

// gatedSource is the arrowstream.Source the session reads: a MemoryStream
// whose latest offset comes from the gate.
type gatedSource struct{ src *Source }

func (g *gatedSource) Schema() *arrow.Schema { return g.src.stream.Schema() }

func (g *gatedSource) LatestOffset(context.Context) (arrowstream.Offset, error) {
	return g.src.gate.latest(g.src.index), nil
}

func (g *gatedSource) Read(ctx context.Context, start, end arrowstream.Offset) (vector.Operator, error) {
	return g.src.stream.Read(ctx, start, end)
}

func (g *gatedSource) Commit(ctx context.Context, end arrowstream.Offset) error {
	return g.src.stream.Commit(ctx, end)
}

// Close does nothing: the fixture owns the stream and closes it.
func (g *gatedSource) Close() error { return nil }

// Description implements arrowstream.DescribedSource.
func (g *gatedSource) Description() string {
	names := make([]string, 0, g.src.stream.Schema().NumFields())
	for _, f := range g.src.stream.Schema().Fields() {
		names = append(names, f.Name)
	}
	return fmt.Sprintf("MemoryStream[%s]", strings.Join(names, ","))
}

// addRows appends one block to each source (rows by source) and publishes
// the new offsets together.
func (s *Stream) addRows(adds []SourceRows) error {
	offsets := map[int]arrowstream.Offset{}
	for _, a := range adds {
		if a.Source == nil {
			return fmt.Errorf("no source")
		}
		rec, err := buildRecord(s.mem, a.Source.Schema(), a.Rows)
		if err != nil {
			return fmt.Errorf("source %s: %w", a.Source.name, err)
		}
		off, err := a.Source.stream.AddRecord(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("source %s: %w", a.Source.name, err)
		}
		offsets[a.Source.index] = off
	}
	s.gate.publish(offsets)
	return nil
}

// buildRecord builds one record of rows (Go values as
// vector.AppendValue accepts them; time.Time for timestamps).
func buildRecord(mem memory.Allocator, schema *arrow.Schema, rows []Row) (arrow.Record, error) {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for r, row := range rows {
		if len(row) != schema.NumFields() {
			return nil, fmt.Errorf("row %d has %d values, the schema has %d columns (%s)", r, len(row), schema.NumFields(), schema)
		}
		for c, v := range row {
			if err := vector.AppendValue(b.Field(c), v); err != nil {
				return nil, fmt.Errorf("row %d column %s: %w", r, schema.Field(c).Name, err)
			}
		}
	}
	return b.NewRecord(), nil
}

// Schema is a helper for tests: a schema of nullable columns given as
// name, type pairs.
func Schema(t testing.TB, pairs ...any) *arrow.Schema {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("streamtest.Schema: odd number of arguments %v", pairs)
	}
	fields := make([]arrow.Field, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		name, ok1 := pairs[i].(string)
		dt, ok2 := pairs[i+1].(arrow.DataType)
		if !ok1 || !ok2 {
			t.Fatalf("streamtest.Schema: want name, type pairs, got %v", pairs)
		}
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}
