package arrowstream_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
	"github.com/arrowstream/arrowstream/vector/vectortest"
)

// Floats that grouping normalizes (-0.0 is 0.0, every NaN one NaN) but a
// value must keep: a NaN with payload bits, a negative NaN, -0.0, the
// infinities.
var (
	nanPayload = math.Float64frombits(0x7ff8000000000123)
	nanNeg     = math.Float64frombits(0xfff8000000000042)
	negZero    = math.Copysign(0, -1)
)

// floatStateCase is a streaming query whose output values come out of
// operator state, the same query in batch form over every row (the
// oracle), and the epochs of input, with the query stopped and restarted
// from its checkpoint between them.
type floatStateCase struct {
	name   string
	mode   arrowstream.OutputMode
	stream string // over STREAM input (and STREAM other)
	batch  string // the same query over the static tables input_t, other_t
	epochs [][2][]st.Row
	// streamDF and batchDF, when set, build the queries instead.
	streamDF, batchDF func(*arrowstream.Session) *arrowstream.DataFrame
	// last compares the last epoch's rows rather than all of them.
	last bool
	// schema of input and other; k, x DOUBLE, ts when nil.
	schema *arrow.Schema
	// want, when set, is the answer instead of a batch query's.
	want []st.Row
	// provider is the state store provider ("" for the default).
	provider string
}

// runFloatStateCase runs c's epochs with a restart between each, then
// compares the sink's rows with the batch answer bit for bit.
func runFloatStateCase(t *testing.T, c floatStateCase) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	conf := map[string]string{arrowstream.ConfShufflePartitions: "2"}
	if c.provider != "" {
		conf[arrowstream.ConfStateStoreProvider] = c.provider
	}
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: c.mode, StepTimeout: 2 * time.Minute,
		Query: func(sess *arrowstream.Session) *arrowstream.DataFrame {
			if c.streamDF != nil {
				return c.streamDF(sess)
			}
			return sess.SQLDataFrame(c.stream)
		},
		Conf: conf,
	})
	schema := c.schema
	if schema == nil {
		schema = st.Schema(t, "k", vector.String, "x", vector.Float64, "ts", vector.Timestamp)
	}
	srcs := [2]*st.Source{s.MustAddSource("input", schema), s.MustAddSource("other", schema)}
	var all [2][]st.Row
	var actions []st.Action
	for i, ep := range c.epochs {
		if i > 0 {
			actions = append(actions, st.StopStream())
		}
		for j, rows := range ep {
			if len(rows) > 0 {
				actions = append(actions, st.AddData(srcs[j], rows...))
				all[j] = append(all[j], rows...)
			}
		}
		actions = append(actions, st.StartStream(arrowstream.ProcessingTime(0), false), st.ProcessAllAvailable())
	}
	for j, name := range []string{"input_t", "other_t"} {
		if err := s.AddTable(name, schema, all[j]...); err != nil {
			t.Fatal(err)
		}
	}
	actions = append(actions, st.AssertOnQuery("bits equal the batch answer's", func(s *st.Stream) error {
		got, err := s.SinkAnswer()
		if err != nil {
			return err
		}
		if c.last {
			snap := s.Sink().LatestBatchData()
			got = vectortest.Rows[st.Row](vectortest.Normalizer{Times: true}, snap.Records()...)
			snap.Release()
		}
		want := c.want
		if want == nil {
			batch := s.Session().SQLDataFrame(c.batch)
			if c.batchDF != nil {
				batch = c.batchDF(s.Session())
			}
			recs, err := batch.Collect(context.Background())
			if err != nil {
				return fmt.Errorf("batch oracle %q: %w", c.batch, err)
			}
			want = vectortest.Rows[st.Row](vectortest.Normalizer{Times: true}, recs...)
			for _, r := range recs {
				r.Release()
			}
		}
		g, w := bitRows(got), bitRows(want)
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			return fmt.Errorf("rows differ in bits\n  want (batch):\n    %s\n  got (stream):\n    %s",
				strings.Join(w, "\n    "), strings.Join(g, "\n    "))
		}
		return nil
	}))
	st.Run(t, s, actions...)
}

// bitRows formats rows with every float as its bits, sorted.
func bitRows(rows []st.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = bitValue([]any(r))
	}
	sort.Strings(out)
	return out
}

func bitValue(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("f%016x", math.Float64bits(x))
	case float32:
		return fmt.Sprintf("f%08x", math.Float32bits(x))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = bitValue(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case nil:
		return "NULL"
	}
	return fmt.Sprintf("%v", v)
}

// fin is an input row of k, x at second ts.
func fin(k string, x any, ts int64) st.Row { return st.Row{k, x, sec(ts)} }

// Every stateful operator returns the values it kept in state with the
// input's bits, across restarts: the stream's answer equals the batch
// answer of the same query bit for bit (-0.0 stays -0.0, a NaN keeps its
// payload; FLOAT too).
func TestStreamingStateKeepsFloatBits(t *testing.T) {
	odd := [][2][]st.Row{
		{{fin("a", negZero, 1), fin("b", nanPayload, 2), fin("c", math.Inf(1), 3), fin("d", nil, 4), fin("e", nanNeg, 5)}, nil},
		{{fin("f", negZero, 6), fin("g", math.Inf(-1), 7)}, nil},
		{{fin("h", nanPayload, 8)}, nil},
	}
	cases := []floatStateCase{
		{
			name: "aggregation", mode: arrowstream.Complete,
			stream: "SELECT k, max(x) AS mx, min(x) AS mn, first(x) AS f, last(x) AS l, max(CAST(x AS FLOAT)) AS ff, count(*) AS n FROM STREAM input GROUP BY k",
			batch:  "SELECT k, max(x) AS mx, min(x) AS mn, first(x) AS f, last(x) AS l, max(CAST(x AS FLOAT)) AS ff, count(*) AS n FROM input_t GROUP BY k",
			epochs: odd,
		},
		{
			// Distinct values are grouping keys: -0.0 and 0.0 are one
			// value, as in the batch answer.
			name: "distinct aggregates", mode: arrowstream.Complete,
			stream: "SELECT k, sum(DISTINCT x) AS s, max(DISTINCT x) AS mx, count(DISTINCT x) AS n FROM STREAM input GROUP BY k",
			batch:  "SELECT k, sum(DISTINCT x) AS s, max(DISTINCT x) AS mx, count(DISTINCT x) AS n FROM input_t GROUP BY k",
			epochs: odd,
		},
		{
			// A double grouping key: -0.0 and 0.0 are one group, NaNs one.
			name: "double grouping key", mode: arrowstream.Complete,
			stream: "SELECT x, count(*) AS n, max(k) AS k FROM STREAM input GROUP BY x",
			batch:  "SELECT x, count(*) AS n, max(k) AS k FROM input_t GROUP BY x",
			epochs: [][2][]st.Row{
				{{fin("a", negZero, 1), fin("b", nanPayload, 2), fin("c", math.Inf(1), 3), fin("d", nil, 4)}, nil},
				{{fin("e", 0.0, 6), fin("f", nanNeg, 7), fin("g", negZero, 8)}, nil},
			},
		},
		{
			// Batch plans no session window: every key here has one
			// session, so the batch aggregation by key is the oracle.
			name: "session window", mode: arrowstream.Complete,
			stream: "SELECT k, mx, f FROM (SELECT k, session_window(ts, '10 seconds') AS w, max(x) AS mx, first(x) AS f FROM STREAM input GROUP BY k, session_window(ts, '10 seconds'))",
			batch:  "SELECT k, max(x) AS mx, first(x) AS f FROM input_t GROUP BY k",
			epochs: odd,
		},
		{
			// Rows wait in state until the watermark passes them; the
			// row of z at 1000 s pushes it past the others.
			name: "streaming OVER", mode: arrowstream.Append,
			stream: "SELECT k, x, ts, max(x) OVER w AS mx, min(x) OVER w AS mn FROM STREAM input WATERMARK ts DELAY OF INTERVAL 5 SECONDS WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
			batch:  "SELECT * FROM (SELECT k, x, ts, max(x) OVER w AS mx, min(x) OVER w AS mn FROM input_t WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)) WHERE k <> 'z'",
			epochs: [][2][]st.Row{
				{{fin("a", negZero, 1), fin("b", nanPayload, 2), fin("a", math.Inf(1), 3), fin("d", nil, 4), fin("b", nanNeg, 5)}, nil},
				{{fin("a", 2.5, 6)}, nil},
				{{fin("z", 0.0, 1000)}, nil},
			},
		},
		{
			// The stored row of a moves to rank 2 when an earlier row
			// arrives after the restart and is emitted again.
			name: "top-N", mode: arrowstream.Update, last: true,
			stream: "SELECT k, x, named_struct('x', x, 'f', CAST(x AS FLOAT)) AS s, ts, row_number() OVER (PARTITION BY k ORDER BY ts) AS rn FROM STREAM input QUALIFY rn <= 2",
			batch:  "SELECT k, x, named_struct('x', x, 'f', CAST(x AS FLOAT)) AS s, ts, row_number() OVER (PARTITION BY k ORDER BY ts) AS rn FROM input_t QUALIFY rn <= 2",
			epochs: [][2][]st.Row{
				{{fin("a", negZero, 5), fin("b", nanPayload, 5), fin("c", math.Inf(1), 5), fin("d", nil, 5), fin("e", nanNeg, 5)}, nil},
				{{fin("a", 1.0, 1), fin("b", 1.0, 1), fin("c", 1.0, 1), fin("d", 1.0, 1), fin("e", 1.0, 1)}, nil},
			},
		},
		{
			name: "stream-stream join", mode: arrowstream.Append,
			stream: "SELECT l.k, l.x AS lx, l.f AS lf, l.s AS ls, r.x AS rx FROM (SELECT k, x, CAST(x AS FLOAT) AS f, named_struct('x', x, 'f', CAST(x AS FLOAT)) AS s FROM STREAM input) AS l JOIN STREAM other AS r ON l.k = r.k",
			batch:  "SELECT l.k, l.x AS lx, l.f AS lf, l.s AS ls, r.x AS rx FROM (SELECT k, x, CAST(x AS FLOAT) AS f, named_struct('x', x, 'f', CAST(x AS FLOAT)) AS s FROM input_t) AS l JOIN other_t AS r ON l.k = r.k",
			epochs: [][2][]st.Row{
				{{fin("a", negZero, 1), fin("b", nanPayload, 2), fin("c", math.Inf(1), 3), fin("d", nil, 4)}, {fin("e", nanNeg, 5)}},
				{{fin("e", 1.5, 6)}, {fin("a", negZero, 7), fin("b", nanNeg, 8), fin("c", nil, 9), fin("d", negZero, 10)}},
			},
		},
		{
			// dropDuplicates keeps the first row of each key with its
			// bits; later rows of the key (0.0 after -0.0) are dropped.
			name: "dropDuplicates", mode: arrowstream.Append,
			streamDF: func(s *arrowstream.Session) *arrowstream.DataFrame { return s.ReadStream("input").DropDuplicates("k") },
			batchDF:  func(s *arrowstream.Session) *arrowstream.DataFrame { return s.Table("input_t").DropDuplicates("k") },
			epochs: [][2][]st.Row{
				{{fin("a", negZero, 1), fin("b", nanPayload, 2), fin("c", math.Inf(1), 3), fin("d", nil, 4)}, nil},
				{{fin("a", 0.0, 6), fin("b", 1.0, 7), fin("e", nanNeg, 8)}, nil},
			},
		},
	}
	for _, provider := range []string{"memory", "pebble"} {
		for _, c := range cases {
			c.provider = provider
			t.Run(provider+"/"+c.name, func(t *testing.T) { runFloatStateCase(t, c) })
		}
	}
}
