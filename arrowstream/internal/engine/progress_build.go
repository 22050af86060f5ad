package engine

import (
	"encoding/json"
	"math"
	"sync/atomic"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// batchProgress builds the progress report of a trigger that ran a batch.
func (m *microBatch) batchProgress(start, wallStart time.Time, durations map[string]int64, ep stream.EpochInfo, inputRows []atomic.Int64, outputRows int64) *stream.StreamingQueryProgress {
	elapsed := time.Since(wallStart)
	durations["triggerExecution"] = elapsed.Milliseconds()
	p := m.baseProgress(start, durations)
	p.BatchID = ep.ID
	p.BatchDuration = elapsed.Milliseconds()
	sinceLast := start.Sub(m.lastTriggerStart)
	first := m.lastTriggerStart.IsZero()
	m.lastTriggerStart = start
	var total int64
	// The rates of the sources and the total, in one allocation.
	fl := floats(make([]float64, 0, 2*(len(m.cfg.Sources)+1)))
	p.Sources = make([]stream.SourceProgress, 0, len(m.cfg.Sources))
	for i := range m.cfg.Sources {
		rows := inputRows[i].Load()
		total += rows
		sp := stream.SourceProgress{
			Description:  m.cfg.SourceDescriptions[i],
			StartOffset:  offsetJSON(m.committed[i]),
			EndOffset:    offsetJSON(m.available[i]),
			LatestOffset: offsetJSON(m.latest[i]),
			NumInputRows: rows,
		}
		sp.InputRowsPerSecond, sp.ProcessedRowsPerSecond = fl.rates(rows, first, sinceLast, elapsed)
		if ms, ok := m.cfg.Sources[i].(stream.MetricsSource); ok {
			sp.Metrics = ms.Metrics()
		}
		p.Sources = append(p.Sources, sp)
	}
	p.NumInputRows = total
	p.InputRowsPerSecond, p.ProcessedRowsPerSecond = fl.rates(total, first, sinceLast, elapsed)
	p.Sink.NumOutputRows = outputRows
	p.StateOperators = m.cfg.Exec.StateProgress()
	if p.StateOperators == nil {
		p.StateOperators = []stream.StateOperatorProgress{}
	}
	if ep.HasWatermark {
		p.EventTime = map[string]string{"watermark": formatProgressTime(time.UnixMilli(ep.WatermarkMs))}
		for _, s := range m.cfg.Exec.EventTimeStats() {
			if s.Count > 0 {
				p.EventTime["max"] = formatProgressTime(time.UnixMilli(s.MaxMs))
				p.EventTime["min"] = formatProgressTime(time.UnixMilli(s.MinMs))
				p.EventTime["avg"] = formatProgressTime(time.UnixMilli(int64(s.SumMs / float64(s.Count))))
				break
			}
		}
	}
	return p
}

// idleProgress reports a trigger that found nothing to do.
// elapsed is how long the trigger took.
func (m *microBatch) idleProgress(start time.Time, elapsed time.Duration, durations map[string]int64) *stream.StreamingQueryProgress {
	durations["triggerExecution"] = elapsed.Milliseconds()
	p := m.baseProgress(start, durations)
	p.BatchID = m.batchID
	p.BatchDuration = durations["triggerExecution"]
	// As Spark: the last execution's state operators, with the per-trigger
	// counters zeroed (none before the first epoch of this run).
	p.StateOperators = []stream.StateOperatorProgress{}
	p.Sources = make([]stream.SourceProgress, 0, len(m.cfg.Sources))
	if m.ranBatch {
		for _, so := range m.cfg.Exec.StateProgress() {
			so.NumRowsUpdated, so.NumRowsDroppedByWatermark = 0, 0
			p.StateOperators = append(p.StateOperators, so)
		}
	}
	for i := range m.cfg.Sources {
		p.Sources = append(p.Sources, stream.SourceProgress{
			Description:  m.cfg.SourceDescriptions[i],
			StartOffset:  offsetJSON(m.committed[i]),
			EndOffset:    offsetJSON(m.available[i]),
			LatestOffset: offsetJSON(m.latest[i]),
		})
	}
	if len(m.cfg.Exec.WatermarkNodes()) > 0 {
		p.EventTime = map[string]string{"watermark": formatProgressTime(time.UnixMilli(m.tracker.global))}
	}
	return p
}

func (m *microBatch) baseProgress(start time.Time, durations map[string]int64) *stream.StreamingQueryProgress {
	p := &stream.StreamingQueryProgress{
		ID:         m.q.id,
		RunID:      m.q.runID,
		Timestamp:  formatProgressTime(start),
		DurationMs: durations,
		Sources:    []stream.SourceProgress{},
		Sink:       stream.SinkProgress{Description: m.cfg.SinkDescription, NumOutputRows: -1},
	}
	if m.q.name != "" {
		name := m.q.name
		p.Name = &name
	}
	return p
}

// floats hands out pointers to rates kept in one array: a report's rates
// are one allocation instead of one each. Its capacity must hold every
// rate handed out (an append that grew it would move the earlier ones'
// storage away from the report, harmlessly but wastefully).
type floats []float64

// rates returns input rows per second (over the time since the previous
// trigger; omitted for the first) and processed rows per second (over the
// batch duration, at least 1 ms), kept in f's array.
func (f *floats) rates(rows int64, first bool, sinceLast, batch time.Duration) (in, proc *float64) {
	if !first && sinceLast > 0 {
		in = f.finite(float64(rows) / sinceLast.Seconds())
	}
	d := max(batch, time.Millisecond)
	return in, f.finite(float64(rows) / d.Seconds())
}

// finite returns a pointer to v kept in f's array, nil for NaN and
// infinities (which Spark omits).
func (f *floats) finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	*f = append(*f, v)
	return &(*f)[len(*f)-1]
}

// offsetJSON embeds an offset as JSON when it parses, else as a string,
// and null when absent.
func offsetJSON(o stream.Offset) json.RawMessage {
	if o == nil {
		return json.RawMessage("null")
	}
	if json.Valid(o) {
		return json.RawMessage(o)
	}
	b, _ := json.Marshal(string(o))
	return b
}

// formatProgressTime renders a trigger start time as Spark does.
func formatProgressTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
