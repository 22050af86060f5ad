package arrowstream

import (
	"errors"

	"github.com/arrowstream/arrowstream/arrowstream/sink/foreach"
)

// ForeachWriter receives a query's output in user code, one partition of
// one epoch at a time (Spark's ForeachWriter); see foreach.Writer.
type ForeachWriter = foreach.Writer

// ForeachBatchFunc receives one epoch's output (Spark's foreachBatch); see
// foreach.BatchFunc.
type ForeachBatchFunc = foreach.BatchFunc

// Foreach makes the query write its output to w (Spark's foreach).
func (w *DataStreamWriter) Foreach(fw ForeachWriter) *DataStreamWriter {
	if fw == nil {
		w.setErr(errors.New("arrowstream: Foreach: nil ForeachWriter"))
		return w
	}
	w.sink = foreach.NewSink(fw)
	return w
}

// ForeachBatch makes the query call fn with each epoch's output (Spark's
// foreachBatch).
func (w *DataStreamWriter) ForeachBatch(fn ForeachBatchFunc) *DataStreamWriter {
	if fn == nil {
		w.setErr(errors.New("arrowstream: ForeachBatch: nil function"))
		return w
	}
	w.sink = foreach.NewBatchSink(fn)
	return w
}

func (w *DataStreamWriter) setErr(err error) {
	if w.err == nil {
		w.err = err
	}
}
