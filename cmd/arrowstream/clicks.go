package main

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
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// clicksSchema is the schema of the synthetic click stream.
var clicksSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64},
	{Name: "event_time", Type: vector.Timestamp},
	{Name: "user_id", Type: vector.Int64},
	{Name: "page", Type: vector.String},
	{Name: "country", Type: vector.String},
}, nil)

// Pages and countries with weights: a skewed distribution, so that "top
// pages" has a clear head and a long tail.
var (
	clickPages = []weighted{
		{"/", 30}, {"/products", 18}, {"/search", 14}, {"/cart", 9}, {"/checkout", 6},
		{"/blog", 6}, {"/docs", 5}, {"/pricing", 4}, {"/about", 3}, {"/login", 3},
		{"/careers", 1}, {"/contact", 1},
	}
	clickCountries = []weighted{
		{"US", 30}, {"DE", 12}, {"IN", 12}, {"BR", 9}, {"FR", 8},
		{"JP", 8}, {"GB", 8}, {"CA", 6}, {"NG", 4}, {"AU", 3},
	}
)

type weighted struct {
	name   string
	weight uint64
}

// clicksOptions configure the clicks source (CREATE TABLE ... USING clicks
// OPTIONS (...)).
type clicksOptions struct {
	// rowsPerSecond is the event rate (option rowsPerSecond, default 200).
	rowsPerSecond int64
	// maxLateness bounds how far an event's time lies before the moment it
	// is generated (option maxLateness, default 8 seconds).
	maxLateness time.Duration
	// lateFraction of the events get a lateness anywhere up to maxLateness;
	// the others arrive less than a second late (option lateFraction,
	// default 0.05).
	lateFraction float64
	// backfill starts a new stream this far in the past, so that its first
	// epoch already holds complete windows (option backfill, default 20
	// seconds). It applies only when the stream is created, not on restart.
	backfill time.Duration
	// maxSecondsPerTrigger bounds how many seconds of events one epoch reads
	// after a long stop (option maxSecondsPerTrigger, default 60).
	maxSecondsPerTrigger int64
	// users is the number of distinct users (option users, default 5000).
	users int64
	clock arrowstream.Clock
}

// parseClicksOptions reads the options, with defaults.
// clicksOptionKeys are the options parseClicksOptions reads.
func clicksOptionKeys() []string {
	return []string{"rowsPerSecond", "users", "maxSecondsPerTrigger", "maxLateness", "backfill", "lateFraction"}
}

func parseClicksOptions(opts map[string]string) (clicksOptions, error) {
	o := clicksOptions{rowsPerSecond: 200, maxLateness: 8 * time.Second, lateFraction: 0.05,
		backfill: 20 * time.Second, maxSecondsPerTrigger: 60, users: 5000}
	positive := func(k, v string) (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("clicks option %s=%q: must be a positive integer", k, v)
		}
		return n, nil
	}
	for k, v := range opts {
		var err error
		switch strings.ToLower(k) {
		case "rowspersecond":
			o.rowsPerSecond, err = positive(k, v)
		case "users":
			o.users, err = positive(k, v)
		case "maxsecondspertrigger":
			o.maxSecondsPerTrigger, err = positive(k, v)
		case "maxlateness", "backfill":
			var d time.Duration
			if d, err = arrowstream.ParseDuration(v); err != nil {
				err = fmt.Errorf("clicks option %s=%q: %w", k, v, err)
			} else if strings.EqualFold(k, "backfill") {
				o.backfill = d
			} else {
				o.maxLateness = d
			}
		case "latefraction":
			f, perr := strconv.ParseFloat(v, 64)
			if perr != nil || f < 0 || f > 1 {
				err = fmt.Errorf("clicks option %s=%q: must be a number between 0 and 1", k, v)
			}
			o.lateFraction = f
		default:
			err = fmt.Errorf("unknown clicks option %q (known: rowsPerSecond, maxLateness, lateFraction, backfill, maxSecondsPerTrigger, users)", k)
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// clicksFormat is the SourceFormat of "clicks". clock nil means the system
// clock.
func clicksFormat(clock arrowstream.Clock) arrowstream.SourceFormat {
	return func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (arrowstream.Source, error) {
		if schema != nil && !schema.Equal(clicksSchema) {
			return nil, fmt.Errorf("the clicks format has a fixed schema (%s); leave the column list out", clicksColumns())
		}
		o, err := parseClicksOptions(opts)
		if err != nil {
			return nil, err
		}
		o.clock = clock
		if o.clock == nil {
			o.clock = arrowstream.SystemClock{}
		}
		return &clicksSource{mem: mem, opts: o, startMs: -1}, nil
	}
}

func clicksColumns() string {
	var cols []string
	for _, f := range clicksSchema.Fields() {
		cols = append(cols, f.Name+" "+vector.TypeName(f.Type))
	}
	return strings.Join(cols, ", ")
}

// clicksSource generates synthetic click events, as the rate source
// generates rows: its offset is the number of whole seconds generated since
// the stream started (the start time is kept in the checkpoint), second s
// holds the events numbered s*rowsPerSecond up to (s+1)*rowsPerSecond, and
// every column of an event is a hash of its number, so that a replayed
// epoch reads exactly the same rows. An event's time is its generation time
// minus a pseudo-random lateness, so events arrive out of order and a few
// arrive after the watermark has passed them.
type clicksSource struct {
	mem     memory.Allocator
	opts    clicksOptions
	startMs int64
}

// Description implements arrowstream.DescribedSource.
func (c *clicksSource) Description() string {
	return fmt.Sprintf("Clicks[rowsPerSecond=%d, maxLateness=%s, lateFraction=%g]", c.opts.rowsPerSecond, c.opts.maxLateness, c.opts.lateFraction)
}

// Schema implements arrowstream.Source.
func (c *clicksSource) Schema() *arrow.Schema { return clicksSchema }

// InitialOffset implements arrowstream.InitialOffsetSource.
func (c *clicksSource) InitialOffset() arrowstream.Offset { return arrowstream.Offset("0") }

// SetCheckpointDir implements arrowstream.CheckpointedSource: the start
// time is read from, or written to, <dir>/0.
func (c *clicksSource) SetCheckpointDir(dir string) error {
	w := &checkpoint.Writer{}
	if err := w.MkdirAll(dir); err != nil {
		return err
	}
	p := filepath.Join(dir, "0")
	var meta struct {
		StartTimeMs int64 `json:"startTimeMs"`
	}
	data, err := checkpoint.ReadSealedFile(p)
	switch {
	case errors.Is(err, checkpoint.ErrCorrupt):
		return fmt.Errorf("clicks source metadata: %w", err)
	case err == nil:
		if err := json.Unmarshal(data, &meta); err != nil {
			return fmt.Errorf("clicks source metadata %s: %v: %w", p, err, checkpoint.ErrCorrupt)
		}
		c.startMs = meta.StartTimeMs
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("clicks source metadata %s: %w", p, err)
	}
	meta.StartTimeMs = c.start()
	data, _ = json.Marshal(meta)
	if err := w.WriteSealedFile(p, data, false); err != nil && !errors.Is(err, checkpoint.ErrExists) {
		return err
	}
	return nil
}

func (c *clicksSource) start() int64 {
	if c.startMs < 0 {
		c.startMs = c.opts.clock.Now().Add(-c.opts.backfill).UnixMilli()
	}
	return c.startMs
}

// LatestOffset implements arrowstream.Source: whole seconds since the start.
func (c *clicksSource) LatestOffset(context.Context) (arrowstream.Offset, error) {
	return formatSecond(c.latest()), nil
}

func (c *clicksSource) latest() int64 {
	return max(c.opts.clock.Now().UnixMilli()-c.start(), 0) / 1000
}

// LatestOffsetFrom implements arrowstream.AdmissionControlSource: at most
// maxSecondsPerTrigger seconds per epoch, so that a restart after a long
// stop catches up in bounded epochs.
func (c *clicksSource) LatestOffsetFrom(_ context.Context, start arrowstream.Offset) (arrowstream.Offset, error) {
	from, err := parseSecond(start)
	if err != nil {
		return nil, err
	}
	return formatSecond(min(c.latest(), from+c.opts.maxSecondsPerTrigger)), nil
}

func formatSecond(s int64) arrowstream.Offset { return arrowstream.Offset(strconv.FormatInt(s, 10)) }

func parseSecond(o arrowstream.Offset) (int64, error) {
	if o == nil {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(o), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("clicks source: offset %q is not a second count", o)
	}
	return n, nil
}

// Read implements arrowstream.Source: the events of seconds (start, end].
func (c *clicksSource) Read(_ context.Context, start, end arrowstream.Offset) (vector.Operator, error) {
	from, err := parseSecond(start)
	if err != nil {
		return nil, err
	}
	to, err := parseSecond(end)
	if err != nil {
		return nil, err
	}
	if to < from {
		return nil, fmt.Errorf("clicks source: end offset %d before start %d", to, from)
	}
	rps := c.opts.rowsPerSecond
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	const chunk = 64 * 1024
	for v, hi := from*rps, to*rps; v < hi; v += chunk {
		recs = append(recs, c.generate(v, min(hi, v+chunk)))
	}
	return vector.NewScan(clicksSchema, recs...)
}

// generate builds the events numbered [lo, hi).
func (c *clicksSource) generate(lo, hi int64) arrow.Record {
	n := int(hi - lo)
	ids := array.NewInt64Builder(c.mem)
	times := array.NewTimestampBuilder(c.mem, vector.Timestamp.(*arrow.TimestampType))
	users := array.NewInt64Builder(c.mem)
	pages := array.NewStringBuilder(c.mem)
	countries := array.NewStringBuilder(c.mem)
	builders := []array.Builder{ids, times, users, pages, countries}
	for _, b := range builders {
		b.Reserve(n)
	}
	rps := c.opts.rowsPerSecond
	startUs := c.start() * 1000
	maxLateUs := uint64(c.opts.maxLateness.Microseconds())
	lateCut := uint64(c.opts.lateFraction * (1 << 20))
	for v := lo; v < hi; v++ {
		h1 := mix64(uint64(v))
		h2 := mix64(h1 ^ 0x9e3779b97f4a7c15)
		// Generation time: event v is the (v % rps)-th of second v / rps.
		genUs := startUs + (v/rps)*1_000_000 + (v%rps)*1_000_000/rps
		late := uint64(0)
		if maxLateUs > 0 {
			if h2&(1<<20-1) < lateCut {
				late = (h2 >> 20) % maxLateUs
			} else {
				late = (h2 >> 20) % min(maxLateUs, 1_000_000)
			}
		}
		ids.UnsafeAppend(v)
		times.UnsafeAppend(arrow.Timestamp(genUs - int64(late)))
		users.UnsafeAppend(int64(h1 % uint64(c.opts.users)))
		pages.Append(pick(clickPages, h1>>32))
		countries.Append(pick(clickCountries, h2>>40))
	}
	cols := make([]arrow.Array, len(builders))
	for i, b := range builders {
		cols[i] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(clicksSchema, cols, int64(n))
	for _, a := range cols {
		a.Release()
	}
	return rec
}

// pick chooses a weighted name by h.
func pick(ws []weighted, h uint64) string {
	var total uint64
	for _, w := range ws {
		total += w.weight
	}
	r := h % total
	for _, w := range ws {
		if r < w.weight {
			return w.name
		}
		r -= w.weight
	}
	return ws[len(ws)-1].name
}

// mix64 is SplitMix64's finalizer: a cheap, well-distributed hash of an
// event number.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Commit implements arrowstream.Source (events are generated, nothing to
// forget).
func (c *clicksSource) Commit(context.Context, arrowstream.Offset) error { return nil }

// Close implements arrowstream.Source.
func (c *clicksSource) Close() error { return nil }
