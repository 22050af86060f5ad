package engine

import (
	"context"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// countingOperator passes records through and counts their rows (input
// rows per source, output rows to the sink).
type countingOperator struct {
	vector.Operator
	rows *atomic.Int64
}

func (c *countingOperator) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := c.Operator.Next(ctx)
	if rec != nil {
		c.rows.Add(rec.NumRows())
	}
	return rec, err
}

// emptyInput is the operator for a source with no new data in an epoch.
func emptyInput(schema *arrow.Schema) vector.Operator {
	scan, _ := vector.NewScan(schema)
	return scan
}
