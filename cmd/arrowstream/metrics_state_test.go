package main

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/arrowstream/arrowstream/arrowstream"
)

func TestMetricsStateCustomMetrics(t *testing.T) {
	m := newMetrics(nil)
	m.progress("q", &arrowstream.StreamingQueryProgress{StateOperators: []arrowstream.StateOperatorProgress{{
		OperatorName:  "stateStoreSave",
		CustomMetrics: map[string]int64{"pebbleBytesCopied": 4096, "pebbleSstFileCount": 3},
	}}})
	tests := []struct {
		metric string
		want   float64
	}{{"pebbleBytesCopied", 4096}, {"pebbleSstFileCount", 3}}
	for _, tc := range tests {
		if got := testutil.ToFloat64(m.stateCustom.WithLabelValues("q", "stateStoreSave", tc.metric)); got != tc.want {
			t.Errorf("%s = %g, want %g", tc.metric, got, tc.want)
		}
	}
}
