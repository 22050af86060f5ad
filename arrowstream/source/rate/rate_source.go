package rate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// Clock is the processing time the rate source counts (arrowstream.Clock
// satisfies it).
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// RateSchema is the schema of the rate sources: (timestamp, value).
var RateSchema = arrow.NewSchema([]arrow.Field{
	{Name: "timestamp", Type: vector.Timestamp, Nullable: true},
	{Name: "value", Type: vector.Int64, Nullable: true},
}, nil)

// RateOptions configure the rate source (Spark's "rate" format).
type RateOptions struct {
	// RowsPerSecond is the steady rate (default 1).
	RowsPerSecond int64
	// RampUpTime is how long the rate takes to reach RowsPerSecond.
	RampUpTime time.Duration
	// NumPartitions splits each epoch's values round-robin (default 1); it
	// only affects row order.
	NumPartitions int
	// Clock drives the elapsed seconds (default the system clock).
	Clock Clock
	// MaxRowsPerTrigger bounds the rows of one epoch (0: Limits'); an
	// epoch may end inside a second (its offset "S+R").
	MaxRowsPerTrigger int64
	// Limits cap RowsPerSecond and give the default MaxRowsPerTrigger.
	Limits Limits
}

// RateOptionKeys are the options ParseRateOptions reads.
func RateOptionKeys() []string {
	return []string{"rowsPerSecond", "rampUpTime", "numPartitions", "maxRowsPerTrigger"}
}

// ParseRateOptions reads Spark's option names: rowsPerSecond, rampUpTime,
// numPartitions, and maxRowsPerTrigger (an Arrowstream addition).
func ParseRateOptions(opts map[string]string) (RateOptions, error) {
	var o RateOptions
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "rowspersecond":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("arrowstream: rate option rowsPerSecond=%q: must be a positive integer", v)
			}
			o.RowsPerSecond = n
		case "rampuptime":
			d, err := stream.ParseDuration(v)
			if err != nil || d < 0 {
				return o, fmt.Errorf("arrowstream: rate option rampUpTime=%q: want a non-negative duration like '5s'", v)
			}
			o.RampUpTime = d
		case "numpartitions":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("arrowstream: rate option numPartitions=%q: must be a positive integer", v)
			}
			o.NumPartitions = n
		case "maxrowspertrigger":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return o, fmt.Errorf("arrowstream: rate option maxRowsPerTrigger=%q: must be a positive integer", v)
			}
			o.MaxRowsPerTrigger = n
		default:
			return o, fmt.Errorf("arrowstream: unknown rate option %q (known: rowsPerSecond, rampUpTime, numPartitions, maxRowsPerTrigger)", k)
		}
	}
	return o, nil
}

// RateSource generates (timestamp, value) rows at a fixed rate, as Spark's
// rate source: its offset is the number of whole seconds since the query
// first started (recorded in the checkpoint so that replays are exact), and
// the values of second s are those between valueAtSecond(s-1) and
// valueAtSecond(s), with timestamps spread evenly over that second.
type RateSource struct {
	mem        memory.Allocator
	opts       RateOptions
	rampUpSecs int64
	startMs    int64 // creation time, persisted
	dir        string
}

// NewRateSource returns a rate source.
func NewRateSource(mem memory.Allocator, opts RateOptions) (*RateSource, error) {
	if opts.RowsPerSecond == 0 {
		opts.RowsPerSecond = 1
	}
	if opts.RowsPerSecond < 0 {
		return nil, fmt.Errorf("arrowstream: rate source: rowsPerSecond %d must be positive", opts.RowsPerSecond)
	}
	if err := opts.Limits.checkCap("rate", "rowsPerSecond", opts.RowsPerSecond); err != nil {
		return nil, err
	}
	if opts.MaxRowsPerTrigger <= 0 {
		opts.MaxRowsPerTrigger = opts.Limits.maxRowsPerTrigger()
	}
	if opts.NumPartitions <= 0 {
		opts.NumPartitions = 1
	}
	if opts.Clock == nil {
		opts.Clock = systemClock{}
	}
	ramp := int64(opts.RampUpTime / time.Second)
	if ramp > 0 && opts.RowsPerSecond/(ramp+1) == 0 {
		return nil, fmt.Errorf("arrowstream: rate source: rowsPerSecond %d is too small for rampUpTime %s", opts.RowsPerSecond, opts.RampUpTime)
	}
	return &RateSource{mem: mem, opts: opts, rampUpSecs: ramp, startMs: -1}, nil
}

// Description implements DescribedSource.
func (r *RateSource) Description() string {
	return fmt.Sprintf("RateStreamV2[rowsPerSecond=%d, rampUpTimeSeconds=%d, numPartitions=%d]", r.opts.RowsPerSecond, r.rampUpSecs, r.opts.NumPartitions)
}

// Schema implements Source.
func (r *RateSource) Schema() *arrow.Schema { return RateSchema }

// InitialOffset implements InitialOffsetSource: second 0.
func (r *RateSource) InitialOffset() stream.Offset { return stream.Offset("0") }

// SetCheckpointDir implements CheckpointedSource: the creation time is read
// from, or written to, <dir>/0.
func (r *RateSource) SetCheckpointDir(dir string) error {
	r.dir = dir
	w := &checkpoint.Writer{}
	if err := w.MkdirAll(dir); err != nil {
		return err
	}
	p := filepath.Join(dir, "0")
	if data, err := checkpoint.ReadSealedFile(p); err == nil {
		var meta struct {
			StartTimeMs int64 `json:"startTimeMs"`
		}
		if err := json.Unmarshal(data, &meta); err != nil {
			return fmt.Errorf("arrowstream: rate source metadata %s: %v: %w", p, err, checkpoint.ErrCorrupt)
		}
		r.startMs = meta.StartTimeMs
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("arrowstream: rate source metadata %s: %w", p, err)
	}
	r.startMs = r.opts.Clock.Now().UnixMilli()
	data, _ := json.Marshal(map[string]int64{"startTimeMs": r.startMs})
	if err := w.WriteSealedFile(p, data, false); err != nil && !errors.Is(err, checkpoint.ErrExists) {
		return err
	}
	return nil
}

func (r *RateSource) start() int64 {
	if r.startMs < 0 {
		r.startMs = r.opts.Clock.Now().UnixMilli()
	}
	return r.startMs
}

// LatestOffset implements Source: whole seconds since the start.
func (r *RateSource) LatestOffset(context.Context) (stream.Offset, error) {
	elapsed := r.opts.Clock.Now().UnixMilli() - r.start()
	if elapsed < 0 {
		elapsed = 0
	}
	return stream.Offset(strconv.FormatInt(elapsed/1000, 10)), nil
}

// LatestOffsetFrom implements AdmissionControlSource: the latest second,
// but no further than MaxRowsPerTrigger rows past start, so that a query
// that lags behind the clock catches up in bounded epochs. The bound is
// exact: an epoch may end inside a second (rate_offset.go).
func (r *RateSource) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	latest, err := r.LatestOffset(ctx)
	if err != nil {
		return nil, err
	}
	to, _ := stream.LongOffset(latest)
	from, err := parseRateOffset(start)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: rate source: %w", err)
	}
	fromV, toV := r.value(from), valueAtSecond(to, r.opts.RowsPerSecond, r.rampUpSecs)
	if toV <= fromV {
		if start == nil {
			return latest, nil
		}
		return start, nil // nothing new
	}
	if toV-fromV <= r.opts.MaxRowsPerTrigger {
		return latest, nil
	}
	return r.posOf(fromV+r.opts.MaxRowsPerTrigger, from.s, to).offset(), nil
}

// valueAtSecond is the number of rows generated in the first `seconds`
// seconds, with a linear ramp-up (Spark's RateStreamProvider formula).
func valueAtSecond(seconds, rowsPerSecond, rampUpSeconds int64) int64 {
	delta := rowsPerSecond / (rampUpSeconds + 1)
	if seconds <= rampUpSeconds {
		if seconds%2 == 1 {
			return (seconds + 1) / 2 * delta * seconds
		}
		return seconds / 2 * delta * (seconds + 1)
	}
	return valueAtSecond(rampUpSeconds, rowsPerSecond, rampUpSeconds) + (seconds-rampUpSeconds)*rowsPerSecond
}

// Read implements Source.
func (r *RateSource) Read(_ context.Context, start, end stream.Offset) (vector.Operator, error) {
	from, err := parseRateOffset(start)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: rate source: %w", err)
	}
	to, err := parseRateOffset(end)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: rate source: %w", err)
	}
	lo, hi := r.value(from), r.value(to)
	if hi < lo {
		return nil, fmt.Errorf("arrowstream: rate source: end offset %s before start %s", to.offset(), from.offset())
	}
	if hi == lo {
		return vector.NewScan(RateSchema)
	}
	// Whole seconds keep Spark's spacing (the range's duration spread
	// over its rows); a partial second starts or ends at its share.
	fromMs, toMs := r.msAt(from), r.msAt(to)
	localStart := r.start() + int64(fromMs)
	msPerValue := (toMs - fromMs) / float64(hi-lo)
	return newGenerator(r.mem, lo, hi, int64(r.opts.NumPartitions), localStart, msPerValue), nil
}

// Commit implements Source (nothing to forget: rows are generated).
func (r *RateSource) Commit(context.Context, stream.Offset) error { return nil }

// Close implements Source.
func (r *RateSource) Close() error { return nil }
