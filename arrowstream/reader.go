package arrowstream

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// DataStreamReader builds a streaming DataFrame over a source format
// (Spark's spark.readStream.format(f).schema(s).option(k, v).load(path)).
// Any format registered with RegisterSourceFormat can be read: the
// built-in rate and rate-micro-batch, and the connectors' (files, Kafka,
// ...) once installed. Errors are kept and reported by Load's DataFrame.
type DataStreamReader struct {
	s      *Session
	format string
	schema *arrow.Schema
	opts   map[string]string
}

// ReadStreamFormat starts a DataStreamReader for format. (ReadStream reads
// a registered streaming table by name.)
func (s *Session) ReadStreamFormat(format string) *DataStreamReader {
	return &DataStreamReader{s: s, format: format, opts: map[string]string{}}
}

// Format changes the reader's format.
func (r *DataStreamReader) Format(format string) *DataStreamReader { r.format = format; return r }

// Schema sets the user schema (the files source infers one when it is not
// set; formats with a fixed schema reject a different one).
func (r *DataStreamReader) Schema(schema *arrow.Schema) *DataStreamReader {
	r.schema = schema
	return r
}

// Option sets one source option (format specific; keys as Spark's).
func (r *DataStreamReader) Option(key, value string) *DataStreamReader {
	r.opts[key] = value
	return r
}

// Options sets several source options.
func (r *DataStreamReader) Options(opts map[string]string) *DataStreamReader {
	for k, v := range opts {
		r.opts[k] = v
	}
	return r
}

// Load returns the streaming DataFrame of the source. A path, when given
// and not empty, becomes the path option; a streaming source reads one path (which may be
// a glob), as in Spark.
func (r *DataStreamReader) Load(path ...string) *DataFrame {
	if len(path) > 1 {
		return r.s.frame(nil, fmt.Errorf("readStream: a streaming source takes one path (a glob may match several), got %d", len(path)))
	}
	opts := make(map[string]string, len(r.opts)+1)
	for k, v := range r.opts {
		opts[k] = v
	}
	if len(path) == 1 && path[0] != "" {
		opts["path"] = path[0] // an empty path is none (a source without paths rejects the option)
	}
	t, err := r.s.formatTable(r.format, r.schema, opts)
	if err != nil {
		return r.s.frame(nil, wrapOp("readStream", err))
	}
	n, err := plan.NewScan(strings.ToLower(r.format), t, true)
	return r.s.frame(n, wrapOp("readStream", err))
}

// formatTable builds the catalog entry of a source of format: it makes one
// source now (which checks the options and gives the schema) and a factory
// that makes one per query. A format whose sources implement BatchSource
// gives a table that a batch SELECT can read too.
func (s *Session) formatTable(format string, schema *arrow.Schema, opts map[string]string) (plan.Table, error) {
	s.mu.Lock()
	f, ok := s.sourceFmts[strings.ToLower(format)]
	s.mu.Unlock()
	if !ok {
		names := s.formatNames()
		sort.Strings(names)
		return nil, fmt.Errorf("unknown source format %q (known: %s)", format, strings.Join(names, ", "))
	}
	if err := s.checkSourceOptions(format, opts); err != nil {
		return nil, err
	}
	if err := s.checkOptionsAccess(format, opts); err != nil {
		return nil, err
	}
	probe, err := f(s.mem, schema, opts)
	if err != nil {
		return nil, err
	}
	sch := probe.Schema()
	_, batch := probe.(BatchSource)
	probe.Close()
	// Every query's source gets the schema the probe settled on (Spark
	// resolves a source's schema once, when the DataFrame or table is
	// declared): a source that infers its schema would otherwise infer
	// again, maybe differently, from the data present when the query starts.
	st := &streamTable{schema: sch, factory: func() (Source, error) { return f(s.mem, sch, opts) }, cluster: s.cluster, name: format}
	if batch {
		on := func(mem memory.Allocator) (Source, error) { return f(mem, sch, opts) }
		return &batchStreamTable{streamTable: st, on: on}, nil
	}
	return st, nil
}

// batchStreamTable is a streaming source table that a batch query can also
// read (plan.BatchTable): each Scan makes a fresh source and reads what it
// has now. The source allocates on the planner's allocator (the embedded
// session's own, or a server query's accounting one), so that what a
// batch read holds (decoded batches, a file's read window) counts against
// the query's memory limit when there is one.
type batchStreamTable struct {
	*streamTable
	on func(mem memory.Allocator) (Source, error) // a source on mem
}

// Scan implements plan.BatchTable. Exactly one source is made (and closed
// with the operator): a first version made one with the session's factory
// and replaced it, unclosed, by one on mem, which leaked what that source
// had buffered (a MemoryStream's two one-row batches: 128 bytes).
func (t *batchStreamTable) Scan(ctx context.Context, mem memory.Allocator) (vector.Operator, error) {
	newSource := t.factory
	if mem != nil {
		newSource = func() (Source, error) { return t.on(mem) }
	}
	src, err := newSource()
	if err != nil {
		return nil, err
	}
	op, err := src.(BatchSource).ReadBatch(ctx)
	if err != nil {
		src.Close()
		return nil, err
	}
	return &closeAfter{Operator: op, after: src.Close}, nil
}

// closeAfter closes an operator, then releases what it was read from.
type closeAfter struct {
	vector.Operator
	after func() error
	done  bool
}

func (c *closeAfter) Close() error {
	err := c.Operator.Close()
	if !c.done {
		c.done = true
		if err2 := c.after(); err == nil {
			err = err2
		}
	}
	return err
}
