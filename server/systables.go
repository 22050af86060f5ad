package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
)

// QueryState is what the system tables show of one streaming query.
type QueryState struct {
	ID, RunID, Name string
	// Status is "ACTIVE", "TERMINATED" or "FAILED".
	Status string
	// Message is the query's status message ("Waiting for data to arrive").
	Message string
	// Exception is the failure of a failed query.
	Exception string
	// Recent lists the recent progress reports, oldest first.
	Recent []*arrowstream.StreamingQueryProgress
	// CheckpointDir is the query's checkpoint directory ("" if unknown).
	CheckpointDir string
}

// QueryLister lists the streaming queries the system tables show. It must
// be safe for concurrent use.
type QueryLister interface {
	Queries() []QueryState
}

// ManagerQueries lists the queries of a QueryManager: the active ones,
// and the failed ones (status FAILED with their error) until a query of
// the same name starts again; the latest maxFailedQueries failures are
// kept. It registers itself as a listener of m.
func ManagerQueries(m *arrowstream.QueryManager) QueryLister {
	l := &managerLister{m: m, failed: map[string]QueryState{}}
	m.AddListener(l)
	return l
}

// maxFailedQueries bounds the failed queries remembered.
const maxFailedQueries = 100

type managerLister struct {
	m *arrowstream.QueryManager

	mu     sync.Mutex
	failed map[string]QueryState // by query id
	order  []string              // ids, oldest failure first
}

func (l *managerLister) Queries() []QueryState {
	var out []QueryState
	seen := map[string]bool{}
	for _, q := range l.m.Active() {
		st := stateOf(q, nil)
		seen[st.ID] = true
		out = append(out, st)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range l.order {
		if !seen[id] {
			out = append(out, l.failed[id])
		}
	}
	return out
}

// stateOf describes q; err is its failure when known.
func stateOf(q *arrowstream.StreamingQuery, err error) QueryState {
	st := QueryState{ID: q.ID(), RunID: q.RunID(), Name: q.Name(), Status: "ACTIVE",
		Message: q.Status().Message, Recent: q.RecentProgress(), CheckpointDir: q.CheckpointDir()}
	if err == nil {
		err = q.Exception()
	}
	if err != nil {
		st.Status, st.Exception = "FAILED", err.Error()
	} else if !q.IsActive() {
		st.Status = "TERMINATED"
	}
	return st
}

func (l *managerLister) OnQueryStarted(q *arrowstream.StreamingQuery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.order); i++ {
		id := l.order[i]
		if id == q.ID() || l.failed[id].Name == q.Name() {
			delete(l.failed, id)
			l.order = append(l.order[:i], l.order[i+1:]...)
			i--
		}
	}
}

func (l *managerLister) OnQueryProgress(*arrowstream.StreamingQuery, *arrowstream.StreamingQueryProgress) {
}

func (l *managerLister) OnQueryTerminated(q *arrowstream.StreamingQuery, err error) {
	if err == nil {
		return
	}
	st := stateOf(q, err)
	st.Status = "FAILED"
	st.Message = "Terminated with exception"
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.failed[st.ID]; !ok {
		l.order = append(l.order, st.ID)
	}
	l.failed[st.ID] = st
	for len(l.order) > maxFailedQueries {
		delete(l.failed, l.order[0])
		l.order = l.order[1:]
	}
}

// SystemTables returns system.streaming_queries (one row per query: id,
// name, status, last epoch, watermark, input and processing rates) and
// system.query_progress (the recent progress reports as rows) over l
// (docs/sql.md).
func SystemTables(l QueryLister) []SystemTable {
	return []SystemTable{&queriesTable{l}, &progressTable{l}}
}

var nullable = func(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

var streamingQueriesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.String},
	{Name: "run_id", Type: vector.String},
	nullable("name", vector.String),
	{Name: "status", Type: vector.String},
	nullable("message", vector.String),
	nullable("last_epoch", vector.Int64),
	nullable("watermark", vector.Timestamp),
	nullable("input_rows_per_second", vector.Float64),
	nullable("processed_rows_per_second", vector.Float64),
	nullable("exception", vector.String),
}, nil)

var queryProgressSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.String},
	{Name: "run_id", Type: vector.String},
	nullable("name", vector.String),
	{Name: "batch_id", Type: vector.Int64},
	nullable("timestamp", vector.Timestamp),
	{Name: "batch_duration_ms", Type: vector.Int64},
	{Name: "num_input_rows", Type: vector.Int64},
	nullable("input_rows_per_second", vector.Float64),
	nullable("processed_rows_per_second", vector.Float64),
	nullable("watermark", vector.Timestamp),
	nullable("num_output_rows", vector.Int64), // null: unknown (Spark's -1)
	{Name: "progress_json", Type: vector.String},
}, nil)

type queriesTable struct{ l QueryLister }

func (*queriesTable) Name() string          { return "streaming_queries" }
func (*queriesTable) Schema() *arrow.Schema { return streamingQueriesSchema }

func (t *queriesTable) Records(ctx context.Context, mem memory.Allocator) ([]arrow.Record, error) {
	b := array.NewRecordBuilder(mem, streamingQueriesSchema)
	defer b.Release()
	for _, q := range t.l.Queries() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		str(b, 0, q.ID)
		str(b, 1, q.RunID)
		optStr(b, 2, q.Name)
		str(b, 3, q.Status)
		optStr(b, 4, q.Message)
		var last *arrowstream.StreamingQueryProgress
		if len(q.Recent) > 0 {
			last = q.Recent[len(q.Recent)-1]
		}
		if last == nil {
			for _, i := range []int{5, 6, 7, 8} {
				b.Field(i).AppendNull()
			}
		} else {
			b.Field(5).(*array.Int64Builder).Append(last.BatchID)
			optTime(b, 6, last.EventTime["watermark"])
			optFloat(b, 7, last.InputRowsPerSecond)
			optFloat(b, 8, last.ProcessedRowsPerSecond)
		}
		optStr(b, 9, q.Exception)
	}
	return []arrow.Record{b.NewRecord()}, nil
}

type progressTable struct{ l QueryLister }

func (*progressTable) Name() string          { return "query_progress" }
func (*progressTable) Schema() *arrow.Schema { return queryProgressSchema }

func (t *progressTable) Records(ctx context.Context, mem memory.Allocator) ([]arrow.Record, error) {
	b := array.NewRecordBuilder(mem, queryProgressSchema)
	defer b.Release()
	for _, q := range t.l.Queries() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, p := range q.Recent {
			if p == nil {
				continue
			}
			str(b, 0, q.ID)
			str(b, 1, q.RunID)
			optStr(b, 2, q.Name)
			b.Field(3).(*array.Int64Builder).Append(p.BatchID)
			optTime(b, 4, p.Timestamp)
			b.Field(5).(*array.Int64Builder).Append(p.BatchDuration)
			b.Field(6).(*array.Int64Builder).Append(p.NumInputRows)
			optFloat(b, 7, p.InputRowsPerSecond)
			optFloat(b, 8, p.ProcessedRowsPerSecond)
			// Before the first watermark Spark reports 1970-01-01: no
			// watermark yet, so null.
			if wm := p.EventTime["watermark"]; strings.HasPrefix(wm, "1970-01-01T00:00:00") {
				b.Field(9).AppendNull()
			} else {
				optTime(b, 9, wm)
			}
			if n := p.Sink.NumOutputRows; n < 0 {
				b.Field(10).AppendNull() // unknown
			} else {
				b.Field(10).(*array.Int64Builder).Append(n)
			}
			str(b, 11, p.JSON())
		}
	}
	return []arrow.Record{b.NewRecord()}, nil
}

func str(b *array.RecordBuilder, i int, v string) { b.Field(i).(*array.StringBuilder).Append(v) }

func optStr(b *array.RecordBuilder, i int, v string) {
	if v == "" {
		b.Field(i).AppendNull()
		return
	}
	str(b, i, v)
}

func optFloat(b *array.RecordBuilder, i int, v *float64) {
	if v == nil {
		b.Field(i).AppendNull()
		return
	}
	b.Field(i).(*array.Float64Builder).Append(*v)
}

// optTime appends a progress time ("2026-01-01T00:00:00.000Z"), null when
// absent or unparsable.
func optTime(b *array.RecordBuilder, i int, v string) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if v == "" || err != nil {
		b.Field(i).AppendNull()
		return
	}
	b.Field(i).(*array.TimestampBuilder).Append(arrow.Timestamp(t.UnixMicro()))
}
