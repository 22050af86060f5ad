package main

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// metrics are the Prometheus metrics of a running engine, in a registry of
// their own (never the global one): per query, from progress reports;
// per sink table, read when scraped; Flight SQL calls, from gRPC
// interceptors.
type metrics struct {
	reg *prometheus.Registry

	active         *prometheus.GaugeVec
	failures       *prometheus.CounterVec
	epochs         *prometheus.CounterVec
	lastEpoch      *prometheus.GaugeVec
	inputRows      *prometheus.CounterVec
	outputRows     *prometheus.CounterVec
	inputRate      *prometheus.GaugeVec
	processRate    *prometheus.GaugeVec
	epochDuration  *prometheus.HistogramVec
	watermark      *prometheus.GaugeVec
	watermarkLag   *prometheus.GaugeVec
	stateRows      *prometheus.GaugeVec
	stateBytes     *prometheus.GaugeVec
	stateCustom    *prometheus.GaugeVec
	lateDropped    *prometheus.CounterVec
	latency        *prometheus.GaugeVec
	flightRequests *prometheus.CounterVec
	flightErrors   *prometheus.CounterVec
}

const metricsNamespace = "arrowstream"

// newMetrics registers the metrics; sinks (may be nil) is read at each
// scrape for the sink tables' sizes.
func newMetrics(sinks *memsink.Catalog) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	q := []string{"query"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: metricsNamespace, Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	gauge := func(name, help string, labels []string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: metricsNamespace, Name: name, Help: help}, labels)
		m.reg.MustRegister(g)
		return g
	}
	m.active = gauge("query_active", "1 while the streaming query runs, 0 after it stopped.", q)
	m.failures = counter("query_failures_total", "Streaming queries that ended with an error.", q)
	m.epochs = counter("query_epochs_total", "Epochs (micro-batches) the query ran.", q)
	m.lastEpoch = gauge("query_last_epoch", "Id of the query's latest epoch.", q)
	m.inputRows = counter("query_input_rows_total", "Rows read from the query's sources.", q)
	m.outputRows = counter("query_output_rows_total", "Rows the query wrote to its sink.", q)
	m.inputRate = gauge("query_input_rows_per_second", "Input rate of the latest epoch (rows arrived per second since the previous one).", q)
	m.processRate = gauge("query_processed_rows_per_second", "Processing rate of the latest epoch (rows per second of epoch time).", q)
	m.epochDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Name: "query_epoch_duration_seconds",
		Help:    "Duration of the query's epochs (triggerExecution).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1 ms .. 33 s
	}, q)
	m.reg.MustRegister(m.epochDuration)
	m.watermark = gauge("query_watermark_seconds", "The query's event-time watermark (Unix seconds).", q)
	m.watermarkLag = gauge("query_watermark_lag_seconds", "How far the watermark trails the processing time of the latest trigger.", q)
	m.stateRows = gauge("query_state_rows", "Rows held in the state store, per stateful operator.", []string{"query", "operator"})
	m.stateBytes = gauge("query_state_bytes", "Memory used by the state store, per stateful operator.", []string{"query", "operator"})
	m.stateCustom = gauge("query_state_custom_metric", "A stateful operator's custom metric of the latest epoch (progress stateOperators[].customMetrics: the state store's commit latencies, files and bytes copied, cache figures).", []string{"query", "operator", "metric"})
	m.lateDropped = counter("query_late_rows_dropped_total", "Input rows dropped because their event time was behind the watermark.", q)
	m.latency = gauge("query_latency_milliseconds", "Continuous queries: milliseconds from data noticed to rows visible in the sink over the latest epoch, by quantile (p50, p99, max).", []string{"query", "quantile"})
	m.flightRequests = counter("flightsql_requests_total", "Arrow Flight (SQL) calls served, by gRPC method.", []string{"method"})
	m.flightErrors = counter("flightsql_errors_total", "Arrow Flight (SQL) calls that failed, by gRPC method and status code.", []string{"method", "code"})
	if sinks != nil {
		m.reg.MustRegister(sinkCollector{sinks})
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *metrics) started(query string) {
	m.active.WithLabelValues(query).Set(1)
	// Create the per-query series at zero, so that rates work from the start.
	m.inputRows.WithLabelValues(query)
	m.outputRows.WithLabelValues(query)
	m.epochs.WithLabelValues(query)
	m.lateDropped.WithLabelValues(query)
	m.failures.WithLabelValues(query)
}

func (m *metrics) terminated(query string, err error) {
	m.active.WithLabelValues(query).Set(0)
	if err != nil {
		m.failures.WithLabelValues(query).Inc()
	}
}

// progress records a progress report. Idle triggers (no new epoch) update
// only the gauges that they carry.
func (m *metrics) progress(query string, p *arrowstream.StreamingQueryProgress) {
	_, ran := p.DurationMs["addBatch"] // only triggers that ran an epoch time addBatch
	m.lastEpoch.WithLabelValues(query).Set(float64(p.BatchID))
	if ran {
		m.epochs.WithLabelValues(query).Inc()
		m.epochDuration.WithLabelValues(query).Observe(float64(p.BatchDuration) / 1000)
	}
	m.inputRows.WithLabelValues(query).Add(float64(p.NumInputRows))
	for quantile, ms := range p.Latency {
		m.latency.WithLabelValues(query, quantile).Set(ms)
	}
	m.outputRows.WithLabelValues(query).Add(float64(max(p.Sink.NumOutputRows, 0)))
	if p.InputRowsPerSecond != nil {
		m.inputRate.WithLabelValues(query).Set(*p.InputRowsPerSecond)
	}
	if p.ProcessedRowsPerSecond != nil {
		m.processRate.WithLabelValues(query).Set(*p.ProcessedRowsPerSecond)
	}
	if wm, ok := p.EventTime["watermark"]; ok {
		if t, err := time.Parse(time.RFC3339Nano, wm); err == nil && t.UnixMilli() > 0 {
			m.watermark.WithLabelValues(query).Set(float64(t.UnixMilli()) / 1000)
			if ts, err := time.Parse(time.RFC3339Nano, p.Timestamp); err == nil {
				m.watermarkLag.WithLabelValues(query).Set(ts.Sub(t).Seconds())
			}
		}
	}
	var dropped int64
	for _, so := range p.StateOperators {
		m.stateRows.WithLabelValues(query, so.OperatorName).Set(float64(so.NumRowsTotal))
		m.stateBytes.WithLabelValues(query, so.OperatorName).Set(float64(so.MemoryUsedBytes))
		for name, v := range so.CustomMetrics {
			m.stateCustom.WithLabelValues(query, so.OperatorName, name).Set(float64(v))
		}
		dropped += so.NumRowsDroppedByWatermark
	}
	m.lateDropped.WithLabelValues(query).Add(float64(dropped))
}

// flightCall counts one Flight call.
func (m *metrics) flightCall(method string, err error) {
	m.flightRequests.WithLabelValues(method).Inc()
	if err != nil {
		m.flightErrors.WithLabelValues(method, status.Code(err).String()).Inc()
	}
}

// UnaryInterceptor and StreamInterceptor count the Flight SQL server's
// calls (grpc.ChainUnaryInterceptor / grpc.ChainStreamInterceptor).
func (m *metrics) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		m.flightCall(info.FullMethod, err)
		return resp, err
	}
}

// StreamInterceptor: see UnaryInterceptor.
func (m *metrics) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(srv, ss)
		m.flightCall(info.FullMethod, err)
		return err
	}
}

// sinkCollector reports the memory-sink tables' sizes when scraped.
type sinkCollector struct{ sinks *memsink.Catalog }

var (
	sinkRowsDesc   = prometheus.NewDesc(metricsNamespace+"_sink_rows", "Rows held by the memory-sink table (superseded ones kept for time travel included).", []string{"table"}, nil)
	sinkBytesDesc  = prometheus.NewDesc(metricsNamespace+"_sink_bytes", "Bytes of Arrow buffers held by the memory-sink table.", []string{"table"}, nil)
	sinkEpochsDesc = prometheus.NewDesc(metricsNamespace+"_sink_epochs", "Epochs the memory-sink table retains.", []string{"table"}, nil)
	sinkLatestDesc = prometheus.NewDesc(metricsNamespace+"_sink_latest_epoch", "The latest epoch committed to the memory-sink table (-1: none).", []string{"table"}, nil)
)

func (c sinkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sinkRowsDesc
	ch <- sinkBytesDesc
	ch <- sinkEpochsDesc
	ch <- sinkLatestDesc
}

func (c sinkCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.sinks.List() {
		t, ok := c.sinks.Lookup(name)
		if !ok {
			continue
		}
		sz := t.Size()
		ch <- prometheus.MustNewConstMetric(sinkRowsDesc, prometheus.GaugeValue, float64(sz.Rows), name)
		ch <- prometheus.MustNewConstMetric(sinkBytesDesc, prometheus.GaugeValue, float64(sz.Bytes), name)
		ch <- prometheus.MustNewConstMetric(sinkEpochsDesc, prometheus.GaugeValue, float64(sz.Epochs), name)
		ch <- prometheus.MustNewConstMetric(sinkLatestDesc, prometheus.GaugeValue, float64(t.LatestEpoch()), name)
	}
}
