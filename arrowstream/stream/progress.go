package stream

import (
	"encoding/json"
)

// StreamingQueryProgress reports one trigger of a streaming query, with
// Spark's JSON field names, order and meanings (docs/semantics.md §11).
type StreamingQueryProgress struct {
	ID                     string                  `json:"id"`
	RunID                  string                  `json:"runId"`
	Name                   *string                 `json:"name"`
	Timestamp              string                  `json:"timestamp"`
	BatchID                int64                   `json:"batchId"`
	BatchDuration          int64                   `json:"batchDuration"`
	NumInputRows           int64                   `json:"numInputRows"`
	InputRowsPerSecond     *float64                `json:"inputRowsPerSecond,omitempty"`
	ProcessedRowsPerSecond *float64                `json:"processedRowsPerSecond,omitempty"`
	DurationMs             map[string]int64        `json:"durationMs,omitempty"`
	EventTime              map[string]string       `json:"eventTime,omitempty"`
	StateOperators         []StateOperatorProgress `json:"stateOperators"`
	Sources                []SourceProgress        `json:"sources"`
	Sink                   SinkProgress            `json:"sink"`
	ObservedMetrics        map[string]any          `json:"observedMetrics,omitempty"`
	// Latency is reported by continuous queries only (an Arrowstream
	// addition): milliseconds from the engine noticing data to its rows
	// being visible in the sink, per processing cycle of the epoch, as
	// "p50", "p99" and "max".
	Latency map[string]float64 `json:"latencyMs,omitempty"`
}

// StateMemoryBytes sums memoryUsedBytes over the report's stateful
// operators (0 for a nil report or none).
func (p *StreamingQueryProgress) StateMemoryBytes() int64 {
	if p == nil {
		return 0
	}
	var n int64
	for _, op := range p.StateOperators {
		n += op.MemoryUsedBytes
	}
	return n
}

// StateOperatorProgress reports one stateful operator.
type StateOperatorProgress struct {
	OperatorName              string           `json:"operatorName"`
	NumRowsTotal              int64            `json:"numRowsTotal"`
	NumRowsUpdated            int64            `json:"numRowsUpdated"`
	AllUpdatesTimeMs          int64            `json:"allUpdatesTimeMs"`
	NumRowsRemoved            int64            `json:"numRowsRemoved"`
	AllRemovalsTimeMs         int64            `json:"allRemovalsTimeMs"`
	CommitTimeMs              int64            `json:"commitTimeMs"`
	MemoryUsedBytes           int64            `json:"memoryUsedBytes"`
	NumRowsDroppedByWatermark int64            `json:"numRowsDroppedByWatermark"`
	NumShufflePartitions      int64            `json:"numShufflePartitions"`
	NumStateStoreInstances    int64            `json:"numStateStoreInstances"`
	CustomMetrics             map[string]int64 `json:"customMetrics,omitempty"`
}

// SourceProgress reports one source.
type SourceProgress struct {
	Description            string            `json:"description"`
	StartOffset            json.RawMessage   `json:"startOffset"`
	EndOffset              json.RawMessage   `json:"endOffset"`
	LatestOffset           json.RawMessage   `json:"latestOffset"`
	NumInputRows           int64             `json:"numInputRows"`
	InputRowsPerSecond     *float64          `json:"inputRowsPerSecond,omitempty"`
	ProcessedRowsPerSecond *float64          `json:"processedRowsPerSecond,omitempty"`
	Metrics                map[string]string `json:"metrics,omitempty"`
}

// SinkProgress reports the sink.
type SinkProgress struct {
	Description   string            `json:"description"`
	NumOutputRows int64             `json:"numOutputRows"`
	Metrics       map[string]string `json:"metrics,omitempty"`
}

// JSON renders the progress as Spark does (NaN and infinite rates omitted).
func (p *StreamingQueryProgress) JSON() string {
	b, err := json.Marshal(p)
	if err != nil {
		return "{}"
	}
	return string(b)
}
