package rate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// RateMicroBatchOptions configure the rate-micro-batch source (Spark's
// "rate-micro-batch" format).
type RateMicroBatchOptions struct {
	// RowsPerBatch rows are produced by every epoch (required, > 0).
	RowsPerBatch int64
	// NumPartitions splits each epoch's values round-robin (default 1).
	NumPartitions int
	// StartTimestampMs is the timestamp of the first epoch's rows.
	StartTimestampMs int64
	// AdvanceMillisPerBatch is added to the timestamp for each epoch
	// (default 1000).
	AdvanceMillisPerBatch int64
	// Limits cap RowsPerBatch.
	Limits Limits
}

// RateMicroBatchOptionKeys are the options ParseRateMicroBatchOptions
// reads.
func RateMicroBatchOptionKeys() []string {
	return []string{"rowsPerBatch", "numPartitions", "startTimestamp", "advanceMillisPerBatch"}
}

// ParseRateMicroBatchOptions reads Spark's option names.
func ParseRateMicroBatchOptions(opts map[string]string) (RateMicroBatchOptions, error) {
	o := RateMicroBatchOptions{AdvanceMillisPerBatch: 1000}
	for k, v := range opts {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return o, fmt.Errorf("arrowstream: rate-micro-batch option %s=%q: not an integer", k, v)
		}
		switch strings.ToLower(k) {
		case "rowsperbatch":
			o.RowsPerBatch = n
		case "numpartitions":
			o.NumPartitions = int(n)
		case "starttimestamp":
			o.StartTimestampMs = n
		case "advancemillisperbatch":
			o.AdvanceMillisPerBatch = n
		default:
			return o, fmt.Errorf("arrowstream: unknown rate-micro-batch option %q (known: rowsPerBatch, numPartitions, startTimestamp, advanceMillisPerBatch)", k)
		}
	}
	return o, nil
}

// RateMicroBatchSource produces exactly RowsPerBatch rows per epoch, every
// row of an epoch carrying the same timestamp, which advances by
// AdvanceMillisPerBatch per epoch: deterministic event time independent of
// the wall clock. Offsets are {"offset":n,"timestamp":ms}.
type RateMicroBatchSource struct {
	mem  memory.Allocator
	opts RateMicroBatchOptions
}

type rateMBOffset struct {
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"`
}

// NewRateMicroBatchSource validates opts and returns the source.
func NewRateMicroBatchSource(mem memory.Allocator, opts RateMicroBatchOptions) (*RateMicroBatchSource, error) {
	if opts.RowsPerBatch <= 0 {
		return nil, fmt.Errorf("arrowstream: rate-micro-batch: rowsPerBatch must be positive, got %d", opts.RowsPerBatch)
	}
	if err := opts.Limits.checkCap("rate-micro-batch", "rowsPerBatch", opts.RowsPerBatch); err != nil {
		return nil, err
	}
	if opts.NumPartitions <= 0 {
		opts.NumPartitions = 1
	}
	if opts.AdvanceMillisPerBatch < 0 {
		return nil, fmt.Errorf("arrowstream: rate-micro-batch: advanceMillisPerBatch must not be negative, got %d", opts.AdvanceMillisPerBatch)
	}
	if opts.StartTimestampMs < 0 {
		return nil, fmt.Errorf("arrowstream: rate-micro-batch: startTimestamp must not be negative, got %d", opts.StartTimestampMs)
	}
	return &RateMicroBatchSource{mem: mem, opts: opts}, nil
}

// Description implements DescribedSource.
func (r *RateMicroBatchSource) Description() string {
	return fmt.Sprintf("RatePerMicroBatchStream[rowsPerBatch=%d, numPartitions=%d, startTimestamp=%d, advanceMillisPerBatch=%d]",
		r.opts.RowsPerBatch, r.opts.NumPartitions, r.opts.StartTimestampMs, r.opts.AdvanceMillisPerBatch)
}

// Schema implements Source.
func (r *RateMicroBatchSource) Schema() *arrow.Schema { return RateSchema }

func (r *RateMicroBatchSource) encode(o rateMBOffset) stream.Offset {
	b, _ := json.Marshal(o)
	return b
}

func (r *RateMicroBatchSource) decode(o stream.Offset) (rateMBOffset, error) {
	if o == nil {
		return rateMBOffset{Timestamp: r.opts.StartTimestampMs}, nil
	}
	var x rateMBOffset
	if err := json.Unmarshal(o, &x); err != nil {
		return x, fmt.Errorf("arrowstream: rate-micro-batch: bad offset %s: %w", o, err)
	}
	return x, nil
}

// InitialOffset implements InitialOffsetSource.
func (r *RateMicroBatchSource) InitialOffset() stream.Offset {
	return r.encode(rateMBOffset{Timestamp: r.opts.StartTimestampMs})
}

// LatestOffset implements Source. The source always has one more epoch of
// data; the engine asks LatestOffsetFrom for the actual end.
func (r *RateMicroBatchSource) LatestOffset(context.Context) (stream.Offset, error) {
	return nil, nil
}

// LatestOffsetFrom implements AdmissionControlSource: one epoch further.
func (r *RateMicroBatchSource) LatestOffsetFrom(_ context.Context, start stream.Offset) (stream.Offset, error) {
	s, err := r.decode(start)
	if err != nil {
		return nil, err
	}
	return r.encode(rateMBOffset{Offset: s.Offset + r.opts.RowsPerBatch, Timestamp: s.Timestamp + r.opts.AdvanceMillisPerBatch}), nil
}

// Read implements Source: values [start.offset, end.offset), all stamped
// with start.timestamp.
func (r *RateMicroBatchSource) Read(_ context.Context, start, end stream.Offset) (vector.Operator, error) {
	s, err := r.decode(start)
	if err != nil {
		return nil, err
	}
	e, err := r.decode(end)
	if err != nil {
		return nil, err
	}
	if e.Offset < s.Offset {
		return nil, fmt.Errorf("arrowstream: rate-micro-batch: end %s before start %s", end, start)
	}
	if e.Offset == s.Offset {
		return vector.NewScan(RateSchema)
	}
	return newGenerator(r.mem, s.Offset, e.Offset, int64(r.opts.NumPartitions), s.Timestamp, 0), nil
}

// Commit implements Source.
func (r *RateMicroBatchSource) Commit(context.Context, stream.Offset) error { return nil }

// Close implements Source.
func (r *RateMicroBatchSource) Close() error { return nil }
