package foreach

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Writer receives a query's output in user code, one partition of
// one epoch at a time (Spark's ForeachWriter).
//
// For each epoch the engine calls Open(ctx, partitionID, epochID); when it
// returns true, Process is called with each record of the partition's
// output, then Close(err) with the first error Process returned (nil if
// none). When Open returns false the partition's rows are skipped (the
// writer has already seen them: this is how a writer deduplicates by epoch
// id) and Close(nil) is still called. When Open returns an error, Close is
// not called. An error from Open, Process or Close fails the query, wrapped
// and naming the epoch.
//
// Process receives whole Arrow records rather than rows, unlike Spark's
// process(row): the engine's data are columnar, and handing a record over
// costs nothing while converting to rows would cost an allocation per value
// and throw away the vectorised layout that a writer to Arrow-aware targets
// (Flight, Parquet, a columnar database) wants to keep. A writer that needs
// rows iterates the record itself. The record is borrowed: it is valid only
// during the call; a writer that keeps it must Retain it (and Release it
// later).
//
// The engine runs the sink's output as a single partition (partitionID 0):
// the epoch's result is merged before it reaches the sink. Calls for one
// query come from one goroutine; a writer shared by several queries must be
// safe for concurrent use.
//
// Delivery is at least once: after a failure or a crash, the last epoch
// whose commit was not recorded is run again with the same epochID and the
// same rows, so Open sees that epoch again. Writers that must not write
// twice remember the epochs they have committed and return false from Open.
type Writer interface {
	Open(ctx context.Context, partitionID, epochID int64) (bool, error)
	Process(ctx context.Context, rec arrow.Record) error
	Close(err error) error
}

// BatchFunc receives one epoch's output (Spark's foreachBatch). The
// records are valid only during the call: the engine releases them when
// the function returns, so a function that keeps a record (or an array of
// it) must Retain it first and Release it later. It must not Release
// records it did not Retain. records holds no empty record; it is empty for
// an epoch without output rows (no-data epochs are delivered too, as in
// Spark).
//
// Delivery is at least once: the last epoch whose commit was not recorded
// (the function failed, or the process died before the commit) is run
// again after a restart with the same epochID and the same rows. A function
// that writes to an external system gets exactly-once results by making the
// write idempotent per epochID (for instance: skip an epoch it has already
// written, or replace the epoch's data in a transaction keyed by it).
//
// A non-nil error fails the query; the query's error wraps it and names
// the epoch.
type BatchFunc func(ctx context.Context, records []arrow.Record, epochID int64) error

// Sink adapts a Writer to stream.Sink. It is not idempotent: a replayed
// epoch reaches the writer again (at-least-once, as Spark's).
type Sink struct{ w Writer }

// NewSink returns the sink of DataStreamWriter.Foreach.
func NewSink(w Writer) *Sink { return &Sink{w: w} }

// Description names the sink in progress reports.
func (s *Sink) Description() string { return "ForeachWriterSink" }

// AddBatch runs Open/Process/Close over the epoch's output. The output is
// always read to the end (also when Open declines it or Process fails), so
// that the operators before the sink finish the epoch as usual.
func (s *Sink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	accept, err := s.w.Open(ctx, 0, epoch)
	if err != nil {
		return fmt.Errorf("foreach writer: open partition 0: %w", err)
	}
	var procErr, readErr error
	for {
		rec, err := data.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		if accept && procErr == nil && rec.NumRows() > 0 {
			procErr = s.w.Process(ctx, rec)
		}
		rec.Release()
		if procErr != nil {
			break
		}
	}
	closeArg := procErr
	if closeArg == nil {
		closeArg = readErr
	}
	closeErr := s.w.Close(closeArg)
	switch {
	case procErr != nil:
		return fmt.Errorf("foreach writer: process: %w", procErr)
	case readErr != nil:
		return readErr
	case closeErr != nil:
		return fmt.Errorf("foreach writer: close: %w", closeErr)
	}
	return nil
}

// BatchSink adapts a BatchFunc to stream.Sink; at-least-once.
type BatchSink struct{ fn BatchFunc }

// NewBatchSink returns the sink of DataStreamWriter.ForeachBatch.
func NewBatchSink(fn BatchFunc) *BatchSink { return &BatchSink{fn: fn} }

// Description names the sink in progress reports.
func (s *BatchSink) Description() string { return "ForeachBatchSink" }

// AddBatch hands the epoch's records to the function.
func (s *BatchSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	recs, err := vector.Drain(ctx, data)
	defer vector.ReleaseRecords(recs)
	if err != nil {
		return err
	}
	nonEmpty := make([]arrow.Record, 0, len(recs))
	for _, r := range recs {
		if r.NumRows() > 0 {
			nonEmpty = append(nonEmpty, r)
		}
	}
	if err := s.fn(ctx, nonEmpty, epoch); err != nil {
		return fmt.Errorf("foreachBatch function: %w", err)
	}
	return nil
}
