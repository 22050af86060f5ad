package engine

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/arrowstream/arrowstream/vector"
)

// FaultInjector is the test hook of arrowstreamtest.FaultInjector: it can
// fail an epoch after its operators consumed their input and before the
// sink receives the result.
type FaultInjector interface {
	BeforeSink(query string, epoch, inputRows int64) error
}

// injectFault drains out (consuming it), consults the injector and returns
// an operator replaying the result for the sink.
func (m *microBatch) injectFault(ctx context.Context, out vector.Operator, inputRows []atomic.Int64) (vector.Operator, error) {
	schema := out.Schema()
	recs, err := vector.Drain(ctx, out)
	out.Close()
	if err != nil {
		return nil, err
	}
	var total int64
	for i := range inputRows {
		total += inputRows[i].Load()
	}
	if err := m.cfg.Faults.BeforeSink(m.q.name, m.batchID, total); err != nil {
		vector.ReleaseRecords(recs)
		return nil, fmt.Errorf("injected fault: %w", err)
	}
	return vector.NewOwnedScan(schema, recs), nil
}
