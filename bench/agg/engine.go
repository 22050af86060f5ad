package agg

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/bench/gen"
	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/vector"
)

// AggQuery is the hash-aggregation query, the same text DuckDB runs.
const AggQuery = "SELECT k, sum(v) AS sum_v, count(*) AS cnt FROM t GROUP BY k"

// AggColumns are the result columns of AggQuery, one row per group.
type AggColumns struct {
	Keys   []int64
	Sums   []float64
	Counts []int64
}

// Groups turns the columns into the map form of gen.AggReference (an
// error when a key appears twice).
func (c AggColumns) Groups() (map[int64]gen.AggGroup, error) {
	return gen.AggGroups(c.Keys, c.Sums, c.Counts)
}

// RunAgg runs AggQuery through a Session over recs (schema gen.AggSchema,
// borrowed) with operators on mem, and returns the result columns, copied
// out of the result records as DuckDB's peer copies its result rows.
func RunAgg(ctx context.Context, mem memory.Allocator, recs []arrow.Record) (AggColumns, error) {
	var out AggColumns
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, Logger: slog.New(slog.DiscardHandler)})
	pebblestate.Register(s)
	if err := s.RegisterTable("t", gen.AggSchema, recs...); err != nil {
		return out, err
	}
	defer s.DropTable("t")
	res, err := s.SQL(ctx, AggQuery)
	if err != nil {
		return out, fmt.Errorf("agg: %s: %w", AggQuery, err)
	}
	defer res.Close()
	for {
		rec, err := res.Op.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("agg: %s: %w", AggQuery, err)
		}
		k, ok1 := rec.Column(0).(*array.Int64)
		sm, ok2 := rec.Column(1).(*array.Float64)
		c, ok3 := rec.Column(2).(*array.Int64)
		if !ok1 || !ok2 || !ok3 || k.NullN()+sm.NullN()+c.NullN() != 0 {
			err = fmt.Errorf("agg: result schema %s (or nulls), want k int64, sum_v float64, cnt int64", rec.Schema())
		} else {
			out.Keys = append(out.Keys, k.Int64Values()...)
			out.Sums = append(out.Sums, sm.Float64Values()...)
			out.Counts = append(out.Counts, c.Int64Values()...)
		}
		rec.Release()
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// winSink collects the windowed query's Append output (key, ws, n).
type winSink struct{ rows WinRows }

// bytes is what the sink holds: its rows' chunks, capacity included.
func (s *winSink) bytes() int64 { return s.rows.bytes() }

func (s *winSink) AddBatch(ctx context.Context, _ int64, data vector.Operator) error {
	defer data.Close()
	for {
		rec, err := data.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		k, ok1 := rec.Column(0).(*array.Int64)
		w, ok2 := rec.Column(1).(*array.Timestamp)
		n, ok3 := rec.Column(2).(*array.Int64)
		if !ok1 || !ok2 || !ok3 {
			err = fmt.Errorf("agg: windowed sink got schema %s", rec.Schema())
		} else {
			kv, wv, nv := k.Int64Values(), w.TimestampValues(), n.Int64Values()
			for i := range kv {
				s.rows.add(gen.WinRow{Key: kv[i], Start: int64(wv[i]), N: nv[i]})
			}
		}
		rec.Release()
		if err != nil {
			return err
		}
	}
}

// RunWindowed runs the windowed count as a streaming query (memory stream →
// withWatermark("ts", "5 seconds") → groupBy(window(ts, '10 seconds'),
// key).count(), Append) over recs (schema gen.WinSchema, one per epoch,
// borrowed): each record is added and processed, data batch and the no-data
// batch that evicts closed windows, before the next. The checkpoint is in
// dir; sync says whether its files are fsynced.
func RunWindowed(ctx context.Context, mem memory.Allocator, recs []arrow.Record, dir string, sync bool) (*WinRows, error) {
	return RunWindowedObserved(ctx, mem, recs, dir, sync, nil)
}

// RunWindowedObserved is RunWindowed that, after each epoch, passes held
// (when not nil) the bytes the query holds: its state (progress
// memoryUsedBytes of its stateful operators) plus its sink's rows.
func RunWindowedObserved(ctx context.Context, mem memory.Allocator, recs []arrow.Record, dir string, sync bool, held func(bytes int64)) (*WinRows, error) {
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: !sync, Logger: slog.New(slog.DiscardHandler)})
	pebblestate.Register(s)
	src := arrowstream.NewMemoryStream(mem, gen.WinSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	sink := &winSink{}
	q, err := s.ReadStream("events").
		WithWatermark("ts", "5 seconds").
		GroupBy("window(ts, '10 seconds') AS w", "key").Agg("count(*) AS n").
		Select("key", "w.start AS ws", "n").
		WriteStream().Sink(sink).OutputMode(arrowstream.Append).Option("checkpointLocation", dir).Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("agg: windowed query: %w", err)
	}
	defer q.Stop()
	for i, rec := range recs {
		if _, err := src.AddRecord(rec); err != nil {
			return nil, fmt.Errorf("agg: windowed epoch %d: %w", i, err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			return nil, fmt.Errorf("agg: windowed epoch %d: %w", i, err)
		}
		if held != nil {
			held(q.LastProgress().StateMemoryBytes() + sink.bytes())
		}
	}
	if held != nil {
		if err := harness.WriteHeapProfile("windowed"); err != nil {
			return nil, err
		}
	}
	if err := q.Stop(); err != nil {
		return nil, err
	}
	return &sink.rows, nil
}
