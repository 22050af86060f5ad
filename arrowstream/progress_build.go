package arrowstream

import (
	"sync/atomic"
	"time"
)

// batchProgress builds the progress report of a trigger that ran a batch.
func (m *microBatch) batchProgress(start, wallStart time.Time, durations map[string]int64, ep EpochInfo, inputRows []atomic.Int64, outputRows int64) *StreamingQueryProgress {
	elapsed := time.Since(wallStart)
	durations["triggerExecution"] = elapsed.Milliseconds()
	p := m.baseProgress(start, durations)
	p.BatchID = ep.ID
	p.BatchDuration = elapsed.Milliseconds()
	sinceLast := start.Sub(m.lastTriggerStart)
	first := m.lastTriggerStart.IsZero()
	m.lastTriggerStart = start
	var total int64
	for i := range m.cfg.sources {
		rows := inputRows[i].Load()
		total += rows
		sp := SourceProgress{
			Description:  m.cfg.sourceDescriptions[i],
			StartOffset:  offsetJSON(m.committed[i]),
			EndOffset:    offsetJSON(m.available[i]),
			LatestOffset: offsetJSON(m.latest[i]),
			NumInputRows: rows,
		}
		sp.InputRowsPerSecond, sp.ProcessedRowsPerSecond = rates(rows, first, sinceLast, elapsed)
		if ms, ok := m.cfg.sources[i].(MetricsSource); ok {
			sp.Metrics = ms.Metrics()
		}
		p.Sources = append(p.Sources, sp)
	}
	p.NumInputRows = total
	p.InputRowsPerSecond, p.ProcessedRowsPerSecond = rates(total, first, sinceLast, elapsed)
	p.Sink.NumOutputRows = outputRows
	p.StateOperators = m.cfg.exec.StateProgress()
	if p.StateOperators == nil {
		p.StateOperators = []StateOperatorProgress{}
	}
	if ep.HasWatermark {
		p.EventTime = map[string]string{"watermark": formatProgressTime(time.UnixMilli(ep.WatermarkMs))}
		for _, s := range m.cfg.exec.EventTimeStats() {
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
func (m *microBatch) idleProgress(start, wallStart time.Time, durations map[string]int64) *StreamingQueryProgress {
	durations["triggerExecution"] = time.Since(wallStart).Milliseconds()
	p := m.baseProgress(start, durations)
	p.BatchID = m.batchID
	p.BatchDuration = durations["triggerExecution"]
	// As Spark: the last execution's state operators, with the per-trigger
	// counters zeroed (none before the first epoch of this run).
	p.StateOperators = []StateOperatorProgress{}
	if m.ranBatch {
		for _, so := range m.cfg.exec.StateProgress() {
			so.NumRowsUpdated, so.NumRowsDroppedByWatermark = 0, 0
			p.StateOperators = append(p.StateOperators, so)
		}
	}
	for i := range m.cfg.sources {
		p.Sources = append(p.Sources, SourceProgress{
			Description:  m.cfg.sourceDescriptions[i],
			StartOffset:  offsetJSON(m.committed[i]),
			EndOffset:    offsetJSON(m.available[i]),
			LatestOffset: offsetJSON(m.latest[i]),
		})
	}
	if len(m.cfg.exec.WatermarkNodes()) > 0 {
		p.EventTime = map[string]string{"watermark": formatProgressTime(time.UnixMilli(m.tracker.global))}
	}
	return p
}

func (m *microBatch) baseProgress(start time.Time, durations map[string]int64) *StreamingQueryProgress {
	p := &StreamingQueryProgress{
		ID:         m.q.id,
		RunID:      m.q.runID,
		Timestamp:  formatProgressTime(start),
		DurationMs: durations,
		Sources:    []SourceProgress{},
		Sink:       SinkProgress{Description: m.cfg.sinkDescription, NumOutputRows: -1},
	}
	if m.q.name != "" {
		name := m.q.name
		p.Name = &name
	}
	return p
}

// rates returns input rows per second (over the time since the previous
// trigger; omitted for the first) and processed rows per second (over the
// batch duration, at least 1 ms).
func rates(rows int64, first bool, sinceLast, batch time.Duration) (*float64, *float64) {
	var in *float64
	if !first && sinceLast > 0 {
		in = finite(float64(rows) / sinceLast.Seconds())
	}
	d := max(batch, time.Millisecond)
	return in, finite(float64(rows) / d.Seconds())
}
