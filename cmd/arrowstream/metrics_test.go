package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// startDemo runs the demo on a test engine and waits until every query
// has run at least minEpochs epochs.
func startDemo(t *testing.T, minEpochs int64) *engine {
	t.Helper()
	e := newTestEngine(t)
	var out bytes.Buffer
	if err := runScript(context.Background(), e, "demo.sql", demoSQL, &out, 0); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		qs := e.monitor.Queries()
		ready := len(qs) == 2
		for _, q := range qs {
			if q.Status != "active" {
				t.Fatalf("query %s is %s: %s", q.Name, q.Status, q.Error)
			}
			ready = ready && q.HasBatch && q.BatchID >= minEpochs
		}
		if ready {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo did not reach epoch %d: %+v", minEpochs, qs)
		}
		select {
		case <-e.monitor.Changed():
		case <-time.After(time.Second):
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	e := startDemo(t, 2)
	// One Flight call that worked and one that failed, through the
	// interceptor the Flight SQL server is given.
	unary := e.metrics.UnaryInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: "/arrow.flight.protocol.FlightService/GetFlightInfo"}
	unary(context.Background(), nil, info, func(context.Context, any) (any, error) { return nil, nil })
	unary(context.Background(), nil, info, func(context.Context, any) (any, error) {
		return nil, status.Error(codes.InvalidArgument, "bad SQL")
	})
	stream := e.metrics.StreamInterceptor()
	stream(nil, nil, &grpc.StreamServerInfo{FullMethod: "/arrow.flight.protocol.FlightService/DoGet"}, func(any, grpc.ServerStream) error {
		return errors.New("gone")
	})

	srv := httptest.NewServer(newWebHandler(e))
	defer srv.Close()
	var families map[string]*dto.MetricFamily
	scrape := func() {
		resp, err := http.Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var parser expfmt.TextParser
		families, err = parser.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("the metrics do not parse: %v\n%s", err, body)
		}
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		mf, ok := families[name]
		if !ok {
			return 0, false
		}
	next:
		for _, m := range mf.Metric {
			for k, v := range labels {
				found := false
				for _, lp := range m.Label {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				return m.Counter.GetValue(), true
			case dto.MetricType_GAUGE:
				return m.Gauge.GetValue(), true
			case dto.MetricType_HISTOGRAM:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
		return 0, false
	}
	pv := map[string]string{"query": "page_views"}
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"arrowstream_query_active", pv, 1},
		{"arrowstream_query_input_rows_total", pv, 200},
		{"arrowstream_query_output_rows_total", pv, 1},
		{"arrowstream_query_epochs_total", pv, 2},
		{"arrowstream_query_epoch_duration_seconds", pv, 2},
		{"arrowstream_query_input_rows_per_second", pv, 0},
		{"arrowstream_query_processed_rows_per_second", pv, 1},
		{"arrowstream_query_watermark_seconds", pv, 1e9},
		{"arrowstream_query_watermark_lag_seconds", pv, 4},
		{"arrowstream_query_state_rows", pv, 1},
		{"arrowstream_query_state_bytes", pv, 0},
		{"arrowstream_query_late_rows_dropped_total", pv, 0},
		{"arrowstream_query_last_epoch", map[string]string{"query": "top_pages"}, 2},
		{"arrowstream_sink_rows", map[string]string{"table": "page_views"}, 1},
		{"arrowstream_sink_bytes", map[string]string{"table": "page_views"}, 1},
		{"arrowstream_sink_epochs", map[string]string{"table": "top_pages"}, 1},
		{"arrowstream_sink_latest_epoch", map[string]string{"table": "top_pages"}, 1},
		{"arrowstream_flightsql_requests_total", map[string]string{"method": info.FullMethod}, 2},
		{"arrowstream_flightsql_errors_total", map[string]string{"method": info.FullMethod, "code": "InvalidArgument"}, 1},
		{"arrowstream_flightsql_errors_total", map[string]string{"method": "/arrow.flight.protocol.FlightService/DoGet", "code": "Unknown"}, 1},
		{"go_goroutines", nil, 1},
	}
	// The figures come from the queries' progress: scrape until every one
	// is reached (the processing rate is the latest epoch's, and an epoch
	// that only moved the watermark processed no rows; on a loaded
	// machine no-data epochs can follow each other, and top_pages, on a
	// trigger of its own, can be an epoch behind page_views) or the
	// deadline passes, then report what is short.
	short := func() []string {
		var out []string
		for _, c := range checks {
			v, ok := value(c.name, c.labels)
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("no %s%v", c.name, c.labels))
			case v < c.min:
				out = append(out, fmt.Sprintf("%s%v = %g, want at least %g", c.name, c.labels, v, c.min))
			}
		}
		return out
	}
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for scrape(); len(short()) > 0 && time.Now().Before(deadline); scrape() {
		select {
		case <-e.monitor.Changed():
		case <-time.After(time.Second):
		}
	}
	for _, msg := range short() {
		t.Error(msg)
	}
}
