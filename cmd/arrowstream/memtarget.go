package main

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// startMemoryTarget starts the session's memory target when
// --memory-target is set (nil, nil when not): the runtime's soft memory
// limit follows the bytes the memory-sink tables and the streaming
// queries' state hold, at most --memory-limit, and /metrics reports the
// held bytes and the limit.
func startMemoryTarget(e *engine, cfg *flightConfig) (*arrowstream.MemoryTarget, error) {
	if cfg.memoryTarget <= 0 {
		return nil, nil
	}
	mt, err := e.session.StartMemoryTarget(arrowstream.MemoryTargetOptions{Ratio: cfg.memoryTarget, Ceiling: max(cfg.memoryLimit, 0)})
	if err != nil {
		return nil, fmt.Errorf("--memory-target: %w", err)
	}
	e.metrics.memoryTarget(mt)
	return mt, nil
}

// memoryTarget reports mt's held bytes and limit when scraped.
func (m *metrics) memoryTarget(mt *arrowstream.MemoryTarget) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metricsNamespace, Name: "memory_held_bytes",
			Help: "Bytes the memory-sink tables and the streaming queries' state hold, as the memory target last measured them (--memory-target)."},
			func() float64 { return float64(mt.Held()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metricsNamespace, Name: "memory_target_limit_bytes",
			Help: "The Go runtime's soft memory limit the memory target set last: its memory with nothing held plus --memory-target per held byte, never under what is live plus a slack, at most --memory-limit."},
			func() float64 { return float64(mt.Limit()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: metricsNamespace, Name: "memory_target_base_bytes",
			Help: "The Go runtime's memory when the memory target started, with nothing held (the limit's base)."},
			func() float64 { return float64(mt.Base()) }),
	)
}
