package server

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// testEngine is a tiny QueryEngine for the server's tests; the real one is
// the planner. It understands:
//
//	SELECT * FROM t [WHERE col = <int> | ?]   over a snapshot of sink table t
//	SELECT count(*) FROM t
//	SELECT * FROM system.<name>
//	SELECT slow        blocks until its context ends
//	SELECT alloc(n)    allocates n bytes through the query's allocator
//	SELECT panic       panics in Next
//	CREATE TABLE t (c bigint, ...) USING memory   an ingest table
//	CREATE STREAMING TABLE t AS SELECT ...        commits 10-row epochs every 5 ms
//	DROP TABLE [IF EXISTS] t
type testEngine struct {
	sinks  *memsink.Catalog
	mem    memory.Allocator
	system []SystemTable

	mu      sync.Mutex
	streams map[string]*testStream
	ingest  map[string]*memIngest
	opened  atomic.Int64 // operators opened
	closed  atomic.Int64 // operators closed
}

type testStream struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func newTestEngine(sinks *memsink.Catalog, mem memory.Allocator, system []SystemTable) *testEngine {
	return &testEngine{sinks: sinks, mem: mem, system: system, streams: map[string]*testStream{}, ingest: map[string]*memIngest{}}
}

var (
	reSelect  = regexp.MustCompile(`(?is)^\s*select\s+\*\s+from\s+([\w.]+)(?:\s+where\s+(\w+)\s*=\s*(\?|-?\d+))?\s*;?\s*$`)
	reCount   = regexp.MustCompile(`(?is)^\s*select\s+count\(\*\)\s+from\s+(\w+)\s*;?\s*$`)
	reSlow    = regexp.MustCompile(`(?is)^\s*select\s+slow\s*$`)
	reAlloc   = regexp.MustCompile(`(?is)^\s*select\s+alloc\((\d+)\)\s*$`)
	rePanic   = regexp.MustCompile(`(?is)^\s*select\s+panic\s*$`)
	reCreate  = regexp.MustCompile(`(?is)^\s*create\s+table\s+(\w+)\s*\((.*)\)\s*using\s+memory\s*;?\s*$`)
	reCreateS = regexp.MustCompile(`(?is)^\s*create\s+streaming\s+table\s+(\w+)\s+as\s+select\s+.+$`)
	reDrop    = regexp.MustCompile(`(?is)^\s*drop\s+table\s+(if\s+exists\s+)?(\w+)\s*;?\s*$`)
)

var countOut = arrow.NewSchema([]arrow.Field{{Name: "count", Type: vector.Int64}}, nil)
var allocOut = arrow.NewSchema([]arrow.Field{{Name: "n", Type: vector.Int64}}, nil)

// streamSchema is the schema of tables CREATE STREAMING TABLE creates.
var streamSchema = arrow.NewSchema([]arrow.Field{{Name: "epoch", Type: vector.Int64}, {Name: "v", Type: vector.Int64}}, nil)

func (e *testEngine) Prepare(ctx context.Context, req Request) (Statement, error) {
	sql := req.SQL
	switch {
	case reSelect.MatchString(sql):
		m := reSelect.FindStringSubmatch(sql)
		schema, err := e.tableSchemaFor(req, m[1])
		if err != nil {
			return Statement{}, err
		}
		st := Statement{IsQuery: true, Schema: schema}
		if m[3] == "?" {
			idx := schema.FieldIndices(m[2])
			if len(idx) == 0 {
				return Statement{}, fmt.Errorf("column %q does not exist in %s", m[2], m[1])
			}
			st.ParameterSchema = arrow.NewSchema([]arrow.Field{{Name: m[2], Type: vector.Int64, Nullable: true}}, nil)
		}
		return st, nil
	case reCount.MatchString(sql):
		if _, err := e.tableSchemaFor(req, reCount.FindStringSubmatch(sql)[1]); err != nil {
			return Statement{}, err
		}
		return Statement{IsQuery: true, Schema: countOut}, nil
	case reSlow.MatchString(sql), reAlloc.MatchString(sql), rePanic.MatchString(sql):
		return Statement{IsQuery: true, Schema: allocOut}, nil
	case reCreate.MatchString(sql), reCreateS.MatchString(sql), reDrop.MatchString(sql):
		return Statement{}, nil
	}
	return Statement{}, fmt.Errorf("syntax error in %q: the test engine does not understand it", sql)
}

// tableSchemaFor is tableSchema for a request, honouring its grants.
func (e *testEngine) tableSchemaFor(req Request, name string) (*arrow.Schema, error) {
	if req.CanRead != nil && !req.CanRead(name) {
		return nil, fmt.Errorf("table or view %q: %w", name, ErrNotFound)
	}
	return e.tableSchema(name)
}

func (e *testEngine) tableSchema(name string) (*arrow.Schema, error) {
	if sys, ok := strings.CutPrefix(strings.ToLower(name), "system."); ok {
		for _, t := range e.system {
			if t.Name() == sys {
				return t.Schema(), nil
			}
		}
	} else if t, ok := e.sinks.Lookup(name); ok {
		return t.Schema(), nil
	}
	return nil, fmt.Errorf("table or view %q: %w", name, ErrNotFound)
}

func (e *testEngine) Query(ctx context.Context, req Request) (*arrow.Schema, OpenFunc, error) {
	st, err := e.Prepare(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsQuery {
		return nil, nil, fmt.Errorf("%q is not a query", req.SQL)
	}
	sql, mem := req.SQL, req.Mem
	switch {
	case reSlow.MatchString(sql):
		return allocOut, e.wrap(func(ctx context.Context) (vector.Operator, error) { return &slowOp{}, nil }), nil
	case rePanic.MatchString(sql):
		return allocOut, e.wrap(func(ctx context.Context) (vector.Operator, error) { return &panicOp{}, nil }), nil
	case reAlloc.MatchString(sql):
		n, _ := strconv.Atoi(reAlloc.FindStringSubmatch(sql)[1])
		return allocOut, e.wrap(func(ctx context.Context) (vector.Operator, error) {
			buf := memory.NewResizableBuffer(mem)
			defer buf.Release()
			buf.Resize(n) // panics with *MemoryLimitError over the limit
			return vector.NewOwnedScan(allocOut, []arrow.Record{int64Rec(mem, allocOut, int64(n))}), nil
		}), nil
	case reCount.MatchString(sql):
		name := reCount.FindStringSubmatch(sql)[1]
		return countOut, e.wrap(func(ctx context.Context) (vector.Operator, error) {
			t, ok := e.sinks.Lookup(name)
			if !ok {
				return nil, fmt.Errorf("table %q: %w", name, ErrNotFound)
			}
			snap := t.Snapshot()
			defer snap.Release()
			return vector.NewOwnedScan(countOut, []arrow.Record{int64Rec(mem, countOut, snap.NumRows())}), nil
		}), nil
	}
	m := reSelect.FindStringSubmatch(sql)
	var filterCol string
	var filterVal *int64
	if m[2] != "" {
		filterCol = m[2]
		if m[3] == "?" {
			if req.Params == nil || req.Params.NumRows() != 1 || req.Params.NumCols() != 1 {
				return nil, nil, fmt.Errorf("%q needs one parameter value", sql)
			}
			col, ok := req.Params.Column(0).(*array.Int64)
			if !ok {
				return nil, nil, fmt.Errorf("parameter of %q must be bigint, got %s", sql, vector.TypeName(req.Params.Column(0).DataType()))
			}
			v := col.Value(0)
			filterVal = &v
		} else {
			v, _ := strconv.ParseInt(m[3], 10, 64)
			filterVal = &v
		}
	}
	if sys, ok := strings.CutPrefix(strings.ToLower(m[1]), "system."); ok {
		for _, t := range e.system {
			if t.Name() == sys {
				return t.Schema(), e.wrap(func(ctx context.Context) (vector.Operator, error) {
					recs, err := t.Records(ctx, mem)
					if err != nil {
						return nil, err
					}
					return vector.NewOwnedScan(t.Schema(), recs), nil
				}), nil
			}
		}
	}
	name := m[1]
	return st.Schema, e.wrap(func(ctx context.Context) (vector.Operator, error) {
		t, ok := e.sinks.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("table %q: %w", name, ErrNotFound)
		}
		op, err := memsink.NewSnapshotScan(t.Snapshot(), false, mem)
		if err != nil {
			return nil, err
		}
		if filterVal == nil {
			return op, nil
		}
		return &filterOp{in: op, mem: mem, col: op.Schema().FieldIndices(filterCol)[0], val: *filterVal}, nil
	}), nil
}

// wrap counts opened and closed operators (leak checks).
func (e *testEngine) wrap(open OpenFunc) OpenFunc {
	return func(ctx context.Context) (vector.Operator, error) {
		op, err := open(ctx)
		if err != nil {
			return nil, err
		}
		e.opened.Add(1)
		return &countedOp{Operator: op, closed: &e.closed}, nil
	}
}

func (e *testEngine) Exec(ctx context.Context, req Request) (int64, error) {
	sql := req.SQL
	switch {
	case reCreate.MatchString(sql):
		m := reCreate.FindStringSubmatch(sql)
		schema, err := parseColumns(m[2])
		if err != nil {
			return 0, fmt.Errorf("CREATE TABLE %s: %w", m[1], err)
		}
		t, err := e.create(m[1], schema)
		if err != nil {
			return 0, err
		}
		e.mu.Lock()
		e.ingest[strings.ToLower(m[1])] = &memIngest{t: t}
		e.mu.Unlock()
		return 0, nil
	case reCreateS.MatchString(sql):
		name := reCreateS.FindStringSubmatch(sql)[1]
		t, err := e.create(name, streamSchema)
		if err != nil {
			return 0, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		s := &testStream{cancel: cancel, done: make(chan struct{})}
		e.mu.Lock()
		e.streams[strings.ToLower(name)] = s
		e.mu.Unlock()
		go func() {
			defer close(s.done)
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for epoch := int64(0); ; epoch++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				b := array.NewRecordBuilder(e.mem, streamSchema)
				for i := range 10 {
					b.Field(0).(*array.Int64Builder).Append(epoch)
					b.Field(1).(*array.Int64Builder).Append(int64(i))
				}
				rec := b.NewRecord()
				b.Release()
				if commitErr(t, epoch, rec) != nil {
					return
				}
			}
		}()
		return 0, nil
	case reDrop.MatchString(sql):
		m := reDrop.FindStringSubmatch(sql)
		name := strings.ToLower(m[2])
		e.mu.Lock()
		s := e.streams[name]
		delete(e.streams, name)
		delete(e.ingest, name)
		e.mu.Unlock()
		if s != nil {
			s.cancel()
			<-s.done
		}
		t, ok := e.sinks.Drop(m[2])
		if !ok {
			if m[1] != "" {
				return 0, nil
			}
			return 0, fmt.Errorf("DROP TABLE %s: table %w", m[2], ErrNotFound)
		}
		return 0, t.Close()
	}
	return 0, fmt.Errorf("syntax error in %q", sql)
}

func (e *testEngine) create(name string, schema *arrow.Schema) (*memsink.Table, error) {
	t, err := memsink.New(e.mem, arrowstream.SinkInfo{QueryName: name, Schema: schema, Mode: arrowstream.Append}, memsink.Options{})
	if err != nil {
		return nil, err
	}
	if err := e.sinks.Register(name, t); err != nil {
		t.Close()
		return nil, fmt.Errorf("CREATE TABLE %s: %w", name, err)
	}
	return t, nil
}

// running reports whether a streaming table's query runs.
func (e *testEngine) running(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.streams[strings.ToLower(name)] != nil
}

// stopAll stops every streaming table's writer.
func (e *testEngine) stopAll() {
	e.mu.Lock()
	streams := e.streams
	e.streams = map[string]*testStream{}
	e.mu.Unlock()
	for _, s := range streams {
		s.cancel()
		<-s.done
	}
}

// LookupIngest implements IngestTargets.
func (e *testEngine) LookupIngest(name string) (IngestTarget, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.ingest[strings.ToLower(name)]
	return t, ok
}

// memIngest appends each pushed batch to a sink table as an epoch.
type memIngest struct {
	t     *memsink.Table
	mu    sync.Mutex
	epoch int64
}

func (m *memIngest) Schema() *arrow.Schema { return m.t.Schema() }

func (m *memIngest) Append(ctx context.Context, rec arrow.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec.Retain()
	if err := commitErr(m.t, m.epoch, rec); err != nil {
		return err
	}
	m.epoch++
	return nil
}

func parseColumns(s string) (*arrow.Schema, error) {
	var fields []arrow.Field
	for _, c := range strings.Split(s, ",") {
		parts := strings.Fields(c)
		if len(parts) != 2 {
			return nil, fmt.Errorf("bad column %q", c)
		}
		var dt arrow.DataType
		switch strings.ToLower(parts[1]) {
		case "bigint":
			dt = vector.Int64
		case "double":
			dt = vector.Float64
		case "string":
			dt = vector.String
		default:
			return nil, fmt.Errorf("column %s: unknown type %s", parts[0], parts[1])
		}
		fields = append(fields, arrow.Field{Name: parts[0], Type: dt, Nullable: true})
	}
	return arrow.NewSchema(fields, nil), nil
}

func int64Rec(mem memory.Allocator, schema *arrow.Schema, v int64) arrow.Record {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Append(v)
	a := b.NewArray()
	defer a.Release()
	return array.NewRecord(schema, []arrow.Array{a}, 1)
}

type countedOp struct {
	vector.Operator
	closed *atomic.Int64
	done   bool
}

func (c *countedOp) Close() error {
	if !c.done {
		c.done = true
		c.closed.Add(1)
	}
	return c.Operator.Close()
}

// filterOp keeps the rows whose bigint column col equals val.
type filterOp struct {
	in  vector.Operator
	mem memory.Allocator
	col int
	val int64
}

func (f *filterOp) Schema() *arrow.Schema { return f.in.Schema() }
func (f *filterOp) Close() error          { return f.in.Close() }

func (f *filterOp) Next(ctx context.Context) (arrow.Record, error) {
	for {
		rec, err := f.in.Next(ctx)
		if err != nil {
			return nil, err
		}
		var idx []int32
		for i, v := range rec.Column(f.col).(*array.Int64).Int64Values() {
			if v == f.val {
				idx = append(idx, int32(i))
			}
		}
		if len(idx) == 0 {
			rec.Release()
			continue
		}
		out, err := vector.TakeRecord(f.mem, rec, idx)
		rec.Release()
		return out, err
	}
}

// slowOp blocks until its context ends.
type slowOp struct{}

func (slowOp) Schema() *arrow.Schema { return allocOut }
func (slowOp) Close() error          { return nil }
func (slowOp) Next(ctx context.Context) (arrow.Record, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// panicOp panics in Next.
type panicOp struct{}

func (panicOp) Schema() *arrow.Schema { return allocOut }
func (panicOp) Close() error          { return nil }
func (panicOp) Next(context.Context) (arrow.Record, error) {
	panic("test engine: deliberate panic")
}
