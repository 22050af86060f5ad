package chaos

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// memsinkWorkload reads a rate-micro-batch stream (value = 0, 1, 2, ...,
// a fixed number of rows per epoch, event time advancing one second per
// epoch), keeps the first Records values, and runs three queries into the
// memory sink with persistence on, each with its own checkpoint:
//
//	proj     stateless projection, Append: one row per record
//	counts   running count and sum per key (value % 97), Update mode as a
//	         materialized view: state store plus view snapshots
//	windows  count per 5-second event-time window with a 2-second
//	         watermark, Append: state, watermark and eviction
//	sessions count per key and session window (a 10-second gap, a
//	         2-second watermark), Append: session state that turns over
//	         as q11's, snapshotted from the operator's live view. Each of
//	         6*rows-per-epoch+1 keys gets a row about every six epochs, so
//	         that an open session goes unchanged for several epochs (a
//	         load must find it in the snapshot or the deltas after it),
//	         for 30 epochs, and then rests for 30, so that its session
//	         closes and a new one opens
//
// The input is a pure function of the offsets logged in the checkpoint,
// so every restart reads the same data for the same epoch.
//
// As the "continuous" workload, proj and counts run with continuous
// processing (20 ms epochs; counts is an Update-mode aggregation, which
// continuous queries run once per epoch) and windows, an Append
// aggregation that continuous processing does not support, is left out.
type memsinkWorkload struct {
	records, perBatch int64
	continuous        bool
}

func newMemsinkWorkload(records int64) *memsinkWorkload {
	// About 200 epochs, whatever the size.
	return &memsinkWorkload{records: records, perBatch: min(max(records/200, 50), 2000)}
}

func (w *memsinkWorkload) Name() string {
	if w.continuous {
		return "continuous"
	}
	return "memsink"
}

func (w *memsinkWorkload) Records() int64 { return w.records }

// queries are the workload's outputs, in start order.
func (w *memsinkWorkload) queries() []string {
	if w.continuous {
		return []string{"proj", "counts"}
	}
	return []string{"proj", "counts", "windows", "sessions"}
}

func (w *memsinkWorkload) Start(ctx context.Context, env Env) (Running, error) {
	writer := &checkpoint.Writer{Hook: env.Hook, NoSync: env.NoSync}
	sess := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: env.Allocator, Logger: env.Logger, NoSync: env.NoSync, CheckpointHook: env.Hook,
		Conf: sessionConf(env.Conf, map[string]string{arrowstream.ConfShufflePartitions: "4"}),
	})
	pebblestate.Register(sess)
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{Persist: true, Writer: writer, Logger: env.Logger})
	err := sess.RegisterSource("events", "rate-micro-batch", nil, map[string]string{
		"rowsPerBatch": strconv.FormatInt(w.perBatch, 10), "advanceMillisPerBatch": "1000",
	})
	if err != nil {
		return nil, err
	}
	keep := fmt.Sprintf("value < %d", w.records)
	frames := map[string]*arrowstream.DataFrame{
		"proj": sess.ReadStream("events").Filter(keep).Select("value", "value % 97 AS k", "value * 3 AS v3"),
		"counts": sess.ReadStream("events").Filter(keep).WithColumn("k", "value % 97").
			GroupBy("k").Agg("count(*) AS n", "sum(value) AS s"),
		// windows' filter reads the event time so that it stays above the
		// watermark node: a filter that does not is run below it (as in
		// Spark), and then the rows past Records would not move the
		// watermark and the last windows would never close.
		"windows": sess.ReadStream("events").WithWatermark("timestamp", "2 seconds").Filter("("+keep+" OR timestamp IS NULL)").
			GroupBy("window(timestamp, '5 seconds') AS w").Agg("count(*) AS n", "max(value) AS hi"),
	}
	// sessions' key: the value modulo 6*perBatch+1, and which half of a
	// 60-epoch cycle the row's epoch is in. Its filter reads the event
	// time, as windows' does.
	keys := 6*w.perBatch + 1
	phase := fmt.Sprintf("CAST(floor(value / %d) AS BIGINT) %% 2", 30*w.perBatch)
	frames["sessions"] = sess.ReadStream("events").WithWatermark("timestamp", "2 seconds").Filter("("+keep+" OR timestamp IS NULL)").
		WithColumn("sk", fmt.Sprintf("value %% %d + %d * (%s)", keys, keys, phase)).
		GroupBy("sk", "session_window(timestamp, '10 seconds')").Agg("count(*) AS n").
		Select("concat(CAST(sk AS STRING), '@', CAST(session_window.start AS STRING)) AS id", "n", "session_window.end AS e")
	modes := map[string]arrowstream.OutputMode{"proj": arrowstream.Append, "counts": arrowstream.Update, "windows": arrowstream.Append, "sessions": arrowstream.Append}
	r := &memsinkRun{w: w, memsinkQueries: memsinkQueries{cat: cat}, sess: sess}
	for _, name := range w.queries() {
		ws := frames[name].WriteStream().Format("memory").QueryName(name).OutputMode(modes[name]).
			Option("checkpointLocation", filepath.Join(env.Dir, "checkpoints", name))
		if w.continuous {
			ws.Trigger(arrowstream.Continuous(20 * time.Millisecond))
		}
		if name == "counts" {
			ws.Option("updateAsView", "true")
		}
		q, err := ws.Start(ctx)
		if err != nil {
			r.Stop()
			return nil, fmt.Errorf("chaos: start query %s: %w", name, err)
		}
		r.queries = append(r.queries, q)
	}
	return r, nil
}

type memsinkRun struct {
	w    *memsinkWorkload
	sess *arrowstream.Session
	memsinkQueries
}

func (r *memsinkRun) Done() (bool, error) {
	if err := r.failed(); err != nil {
		return false, err
	}
	if len(r.queries) < len(r.w.queries()) {
		return false, nil
	}
	t, ok := r.cat.Lookup("proj")
	if !ok || t.Size().Rows < r.w.records {
		return false, nil
	}
	res, err := r.Result()
	if err != nil {
		return false, err
	}
	for _, name := range r.w.queries() {
		if res[name].Weight() < r.w.records {
			return false, nil
		}
	}
	return true, nil
}

// Result reads each table's snapshot. proj is keyed by value (weight 1 per
// row); counts by k (weight n); windows by window (weight n); sessions by
// key and session start (weight n).
func (r *memsinkRun) Result() (Result, error) {
	keys := map[string]string{"proj": "value", "counts": "k", "windows": "w", "sessions": "id"}
	weights := map[string]string{"counts": "n", "windows": "n", "sessions": "n"}
	return r.read(r.w.queries(), func(t string) string { return keys[t] }, func(t string) string { return weights[t] })
}

// addRows adds every row to out keyed by the key column, weighted by the
// weight column (1 when weight is empty), the other columns as the value.
func addRows(out Output, recs []arrow.Record, key, weight string) error {
	for _, rec := range recs {
		ki, wi := colIndex(rec, key), colIndex(rec, weight)
		if ki < 0 || weight != "" && wi < 0 {
			return fmt.Errorf("columns %q/%q not in %s", key, weight, rec.Schema())
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			w := int64(1)
			if wi >= 0 {
				v, ok := vector.ValueAt(rec.Column(wi), i).(int64)
				if !ok {
					return errors.New("weight column is not bigint")
				}
				w = v
			}
			var vals []string
			for c := 0; c < int(rec.NumCols()); c++ {
				if c != ki && c != wi {
					col := rec.Column(c)
					vals = append(vals, vector.FormatValue(vector.ValueAt(col, i), col.DataType()))
				}
			}
			out.Add(vector.FormatValue(vector.ValueAt(rec.Column(ki), i), rec.Column(ki).DataType()), w, strings.Join(vals, ","))
		}
	}
	return nil
}

func colIndex(rec arrow.Record, name string) int {
	if name == "" {
		return -1
	}
	for i, f := range rec.Schema().Fields() {
		if f.Name == name {
			return i
		}
	}
	return -1
}

func (r *memsinkRun) Stop() error { return r.stop(r.w.queries()) }
