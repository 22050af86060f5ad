package chaos

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
)

// statefulWorkload runs one query per kind of stateful operator, each into
// the memory sink with its own checkpoint, over three rate-micro-batch
// streams of perBatch rows per epoch (values 0, 1, 2, ..., event time
// advancing one second per epoch from statefulStartMs). Rows at or past
// Records are filtered out above the watermark nodes, so that they still
// move the watermark and every eviction and timeout eventually happens.
//
// Inputs (e is a value's epoch, v / perBatch):
//
//	left   lv = value, lts = its epoch's time, or 60 s earlier (late,
//	       dropped by every watermarked operator) when e >= 10 and
//	       v % 7 == 3
//	right  rv = value, rk = the left key it joins (rightKey: the same
//	       epoch's value, two or one epochs before — inside the join's
//	       3-second range —, six epochs before — outside it —, or none),
//	       rts like lts with v % 11 == 5 late
//	events ts like lts with v % 13 == 7 late
//
// Queries (output key, weight):
//
//	join_inner   lv = rk AND rts within [lts, lts+3s]: a row per pair
//	join_left    left outer: pairs, and (lv, null) at left eviction
//	join_right   right outer: pairs, and (null, rv) at right eviction
//	join_full    full outer: both kinds of null rows
//	join_semi    left semi: each matched lv once
//	join_agg     count per 5-second window of lts over join_inner's pairs
//	             (an aggregation after a join)
//	agg_agg      count per 5-second window of ts, then the sum of those
//	             per 20-second window of window_time (two aggregations)
//	dedup        dropDuplicates(d), d = value % (Records/3), no watermark
//	dedup_wm     dropDuplicates(d, ts) with a watermark, ts jittered back
//	             0-2 s so that a (d, ts) repeats across epochs
//	dedup_within dropDuplicatesWithinWatermark(d): each d comes in two
//	             consecutive epochs (the second suppressed) and again 40
//	             epochs later (the state expired: emitted again)
//	gs_event     flatMapGroupsWithState, event-time timeout 20 s after a
//	             key's last row: a key gets a row about every six epochs
//	             for 30 epochs and rests 30, so its "session" times out and
//	             is emitted (key@first, count, last) and removed
//	gs_proc      flatMapGroupsWithState, processing-time timeout: a count
//	             per key emitted every 5 rows and its rest at the timeout
//	             (300 ms without a row); a key (v % 37, and which of four
//	             3-epoch turns v is in) gets rows for 3 epochs and rests
//	             for 9, so that timeouts fire all through the run. The
//	             per-key sum is the same however batches and timeouts fall
//
// Model returns, for every query, the rows computed by brute force from
// the input, so that a wrong answer the engine gives every time (and the
// reference run with it) is caught too.
type statefulWorkload struct {
	records, perBatch int64
}

// statefulStartMs is the event time of epoch 0: far from 0, which the
// initial watermark makes late.
const statefulStartMs = 1_000_000

func newStatefulWorkload(records int64) *statefulWorkload {
	// About 120 epochs: enough for the 60-epoch turnover of gs_event and
	// the 40-epoch repeat of dedup_within.
	return &statefulWorkload{records: records, perBatch: min(max(records/120, 20), 2000)}
}

func (w *statefulWorkload) Name() string      { return "stateful" }
func (w *statefulWorkload) Records() int64    { return w.records }
func (w *statefulWorkload) queries() []string { return statefulQueries }

var statefulQueries = []string{
	"join_inner", "join_left", "join_right", "join_full", "join_semi", "join_agg", "agg_agg",
	"dedup", "dedup_wm", "dedup_within", "gs_event", "gs_proc",
}

// lateExpr is the event time of a stream: its epoch's time, or 60 s
// earlier for the late rows (from epoch 10 on, value % mod == rem).
func (w *statefulWorkload) lateExpr(mod, rem int64) string {
	return fmt.Sprintf("CASE WHEN value >= %d AND value %% %d = %d THEN timestamp - INTERVAL 60 SECONDS ELSE timestamp END",
		10*w.perBatch, mod, rem)
}

// rightKey is the left key right row v joins: the model's copy of the
// rk expression in Start.
func (w *statefulWorkload) rightKey(v int64) int64 {
	switch v % 5 {
	case 0:
		return v
	case 1:
		return v - 2*w.perBatch
	case 2:
		return v - 6*w.perBatch
	case 3:
		return v - w.perBatch
	}
	return -1 - v
}

func (w *statefulWorkload) rightKeyExpr() string {
	p := w.perBatch
	return fmt.Sprintf("CASE value %% 5 WHEN 0 THEN value WHEN 1 THEN value - %d WHEN 2 THEN value - %d WHEN 3 THEN value - %d ELSE -1 - value END",
		2*p, 6*p, p)
}

// dWithinExpr: the value's place in its epoch, plus perBatch times which
// pair of epochs (mod 20) it is in.
func (w *statefulWorkload) dWithinExpr() string {
	p := w.perBatch
	return fmt.Sprintf("value %% %d + %d * (CAST(floor(value / %d) AS BIGINT) %% 20)", p, p, 2*p)
}

// gsKeys is the number of gs_event keys per phase (6*perBatch+1: a row
// about every six epochs); the key adds gsKeys in odd 30-epoch phases.
func (w *statefulWorkload) gsKeys() int64 { return 6*w.perBatch + 1 }

func (w *statefulWorkload) gsKeyExpr() string {
	k := w.gsKeys()
	return fmt.Sprintf("value %% %d + %d * (CAST(floor(value / %d) AS BIGINT) %% 2)", k, k, 30*w.perBatch)
}

func (w *statefulWorkload) Start(ctx context.Context, env Env) (Running, error) {
	writer := &checkpoint.Writer{Hook: env.Hook, NoSync: env.NoSync}
	sess := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: env.Allocator, Logger: env.Logger, NoSync: env.NoSync, CheckpointHook: env.Hook,
		Conf: sessionConf(env.Conf, map[string]string{arrowstream.ConfShufflePartitions: "3"}),
	})
	pebblestate.Register(sess)
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{Persist: true, Writer: writer, Logger: env.Logger})
	for _, name := range []string{"left", "right", "events"} {
		err := sess.RegisterSource(name, "rate-micro-batch", nil, map[string]string{
			"rowsPerBatch": strconv.FormatInt(w.perBatch, 10), "advanceMillisPerBatch": "1000",
			"startTimestamp": strconv.Itoa(statefulStartMs),
		})
		if err != nil {
			return nil, err
		}
	}
	frames, err := w.frames(sess, env.Allocator)
	if err != nil {
		return nil, err
	}
	r := &statefulRun{w: w, memsinkQueries: memsinkQueries{cat: cat}, sess: sess, want: weights(w.Model())}
	for _, name := range w.queries() {
		ws := frames[name].WriteStream().Format("memory").QueryName(name).OutputMode(arrowstream.Append).
			Option("checkpointLocation", filepath.Join(env.Dir, "checkpoints", name))
		q, err := ws.Start(ctx)
		if err != nil {
			r.Stop()
			return nil, fmt.Errorf("chaos: start query %s: %w", name, err)
		}
		r.queries = append(r.queries, q)
	}
	return r, nil
}

// frames builds the queries. Every output has an "id" column (its key)
// and, where a row stands for several input rows, an "n" column.
func (w *statefulWorkload) frames(sess *arrowstream.Session, mem memory.Allocator) (map[string]*arrowstream.DataFrame, error) {
	keep := func(tcol string) string { return fmt.Sprintf("(value < %d OR %s IS NULL)", w.records, tcol) }
	// The filters read the event time so that they stay above the
	// watermark nodes (see memsinkWorkload).
	left := func() *arrowstream.DataFrame {
		return sess.ReadStream("left").WithColumn("lts", w.lateExpr(7, 3)).WithWatermark("lts", "2 seconds").
			Filter(keep("lts")).Select("value AS lv", "lts")
	}
	right := func() *arrowstream.DataFrame {
		return sess.ReadStream("right").WithColumn("rts", w.lateExpr(11, 5)).WithWatermark("rts", "2 seconds").
			Filter(keep("rts")).Select("value AS rv", w.rightKeyExpr()+" AS rk", "rts")
	}
	events := func(ts, delay string) *arrowstream.DataFrame {
		return sess.ReadStream("events").WithColumn("ts", ts).WithWatermark("ts", delay).Filter(keep("ts"))
	}
	const cond = "lv = rk AND rts BETWEEN lts AND lts + INTERVAL 3 SECONDS"
	pair := "concat(coalesce(CAST(lv AS STRING), 'null'), '-', coalesce(CAST(rv AS STRING), 'null')) AS id"
	f := map[string]*arrowstream.DataFrame{
		"join_inner": left().Join(right(), cond, "inner").Select(pair),
		"join_left":  left().Join(right(), cond, "left_outer").Select(pair),
		"join_right": left().Join(right(), cond, "right_outer").Select(pair),
		"join_full":  left().Join(right(), cond, "full_outer").Select(pair),
		"join_semi":  left().Join(right(), cond, "left_semi").Select("CAST(lv AS STRING) AS id"),
		"join_agg": left().Join(right(), cond, "inner").Select("lts").
			GroupBy("window(lts, '5 seconds') AS w").Agg("count(*) AS n").
			Select("CAST(unix_millis(w.start) AS STRING) AS id", "n"),
		"agg_agg": events(w.lateExpr(13, 7), "2 seconds").
			GroupBy("window(ts, '5 seconds') AS w").Agg("count(*) AS n").
			GroupBy("window(window_time(w), '20 seconds') AS w2").Agg("sum(n) AS n").
			Select("CAST(unix_millis(w2.start) AS STRING) AS id", "n"),
		"dedup": sess.ReadStream("events").Filter(fmt.Sprintf("value < %d", w.records)).
			Select(fmt.Sprintf("value %% %d AS d", w.dedupMod())).DropDuplicates("d").
			Select("CAST(d AS STRING) AS id"),
		"dedup_wm": events(fmt.Sprintf("CASE WHEN value >= %d AND value %% 13 = 7 THEN timestamp - INTERVAL 60 SECONDS ELSE timestamp - make_dt_interval(0, 0, 0, value %% 3) END", 10*w.perBatch), "2 seconds").
			Select(fmt.Sprintf("value %% %d AS d", w.dedupWMMod()), "ts").DropDuplicates("d", "ts").
			Select("concat(CAST(d AS STRING), '@', CAST(unix_millis(ts) AS STRING)) AS id"),
		"dedup_within": events(w.lateExpr(13, 7), "5 seconds").
			Select(w.dWithinExpr()+" AS d", "ts").DropDuplicatesWithinWatermark("d").
			Select("concat(CAST(d AS STRING), '@', CAST(unix_millis(ts) AS STRING)) AS id"),
		"gs_event": events(w.lateExpr(13, 7), "2 seconds").
			Select(w.gsKeyExpr()+" AS sk", "ts", "unix_millis(ts) AS tms").GroupByKey("sk").
			FlatMapGroupsWithState(gsOutSchema, arrowstream.Append, arrowstream.EventTimeTimeout, gsEventFunc(mem)),
		"gs_proc": sess.ReadStream("events").Filter(fmt.Sprintf("value < %d", w.records)).
			Select(fmt.Sprintf("value %% 37 + 37 * (CAST(floor(value / %d) AS BIGINT) %% 4) AS g", 3*w.perBatch)).GroupByKey("g").
			FlatMapGroupsWithState(gsOutSchema, arrowstream.Append, arrowstream.ProcessingTimeTimeout, gsProcFunc(mem)),
	}
	for name, df := range f {
		if err := df.Err(); err != nil {
			return nil, fmt.Errorf("chaos: query %s: %w", name, err)
		}
	}
	return f, nil
}

func (w *statefulWorkload) dedupMod() int64   { return max(w.records/3, 1) }
func (w *statefulWorkload) dedupWMMod() int64 { return max(w.perBatch/2, 1) }

// gsOutSchema is the output of both group-state functions: the key (with
// the session's first event time for gs_event), the rows it accounts for
// and, for gs_event, the session's last event time.
var gsOutSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.BinaryTypes.String},
	{Name: "n", Type: arrow.PrimitiveTypes.Int64},
	{Name: "last", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func gsRecord(mem memory.Allocator, id string, n int64, last *int64) arrow.Record {
	b := array.NewRecordBuilder(mem, gsOutSchema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(id)
	b.Field(1).(*array.Int64Builder).Append(n)
	if last != nil {
		b.Field(2).(*array.Int64Builder).Append(*last)
	} else {
		b.Field(2).AppendNull()
	}
	return b.NewRecord()
}

// gsState is a group state of int64 fields.
func gsDecode(s *arrowstream.GroupState, n int) ([]int64, error) {
	out := make([]int64, n)
	if !s.Exists() {
		return out, nil
	}
	b := s.Get()
	if len(b) != 8*n {
		return nil, fmt.Errorf("chaos: group state of %d bytes, want %d", len(b), 8*n)
	}
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}

func gsEncode(s *arrowstream.GroupState, vals ...int64) error {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return s.Update(b)
}

func int64Col(rec arrow.Record, name string) (*array.Int64, error) {
	i := colIndex(rec, name)
	if i < 0 {
		return nil, fmt.Errorf("chaos: no column %q in %s", name, rec.Schema())
	}
	c, ok := rec.Column(i).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("chaos: column %q is %s, not bigint", name, rec.Column(i).DataType())
	}
	return c, nil
}

// gsEventFunc keeps (first, last, count) of a key's current session and
// emits it when the watermark passes 20 s after the last row.
func gsEventFunc(mem memory.Allocator) arrowstream.GroupFunc {
	return func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		st, err := gsDecode(s, 3)
		if err != nil {
			return nil, err
		}
		if s.HasTimedOut() {
			s.Remove()
			return gsRecord(mem, fmt.Sprintf("%s@%d", key.ValueStr(0), st[0]), st[2], &st[1]), nil
		}
		tms, err := int64Col(rows, "tms")
		if err != nil {
			return nil, err
		}
		first, last, n := st[0], st[1], st[2]
		for i := 0; i < tms.Len(); i++ {
			t := tms.Value(i)
			if n == 0 || t < first {
				first = t
			}
			last = max(last, t)
			n++
		}
		if err := gsEncode(s, first, last, n); err != nil {
			return nil, err
		}
		return nil, s.SetTimeoutTimestamp(last, 20*time.Second)
	}
}

// gsProcFunc counts a key's rows, emits the count at every 5 and the
// rest when the key has had no row for 300 ms of processing time.
func gsProcFunc(mem memory.Allocator) arrowstream.GroupFunc {
	return func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		st, err := gsDecode(s, 1)
		if err != nil {
			return nil, err
		}
		if s.HasTimedOut() {
			s.Remove()
			if st[0] == 0 {
				return nil, nil
			}
			return gsRecord(mem, key.ValueStr(0), st[0], nil), nil
		}
		pending := st[0] + rows.NumRows()
		var out arrow.Record
		if pending >= 5 {
			out, pending = gsRecord(mem, key.ValueStr(0), pending, nil), 0
		}
		if err := gsEncode(s, pending); err != nil {
			if out != nil {
				out.Release()
			}
			return nil, err
		}
		if err := s.SetTimeoutDuration(300 * time.Millisecond); err != nil {
			if out != nil {
				out.Release()
			}
			return nil, err
		}
		return out, nil
	}
}

type statefulRun struct {
	w    *statefulWorkload
	sess *arrowstream.Session
	memsinkQueries
	want map[string]int64
}

func weights(r Result) map[string]int64 {
	out := make(map[string]int64, len(r))
	for name, o := range r {
		out[name] = o.Weight()
	}
	return out
}

// Done: every output reached the model's weight.
func (r *statefulRun) Done() (bool, error) {
	if err := r.failed(); err != nil {
		return false, err
	}
	if len(r.queries) < len(r.w.queries()) {
		return false, nil
	}
	res, err := r.Result()
	if err != nil {
		return false, err
	}
	for _, name := range r.w.queries() {
		if res[name].Weight() < r.want[name] {
			return false, nil
		}
	}
	return true, nil
}

// Result reads each table: keyed by id, weighted by n where there is one.
func (r *statefulRun) Result() (Result, error) {
	return r.read(r.w.queries(), func(string) string { return "id" }, func(t string) string {
		switch t {
		case "join_agg", "agg_agg", "gs_event", "gs_proc":
			return "n"
		}
		return ""
	})
}

func (r *statefulRun) Stop() error { return r.stop(r.w.queries()) }
