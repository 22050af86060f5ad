package arrowstream_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// nestedQueries are streaming queries with ARRAY and STRUCT keys and
// values in state (%s is the input: STREAM input or input_t, and STREAM
// other or other_t), with the output mode each runs in.
var nestedQueries = []struct {
	name, sql string
	mode      arrowstream.OutputMode
}{
	{"group by array", "SELECT a, count(*) AS n, max(k) AS mk FROM %[1]s GROUP BY a", arrowstream.Complete},
	{"group by struct of array", "SELECT named_struct('l', a, 'e', try_element_at(a, 1)) AS s, count(*) AS n FROM %[1]s GROUP BY 1", arrowstream.Complete},
	{"list state: collect_list", "SELECT k, collect_list(try_element_at(a, 1)) AS e, collect_list(k) AS ks, count(*) AS n FROM %[1]s GROUP BY k", arrowstream.Complete},
	{"list state: collect_set", "SELECT k, sort_array(collect_set(try_element_at(a, 1))) AS e, sort_array(collect_set(k)) AS ks FROM %[1]s GROUP BY k", arrowstream.Complete},
	{"distinct aggregate of arrays", "SELECT k, count(DISTINCT a) AS n FROM %[1]s GROUP BY k", arrowstream.Complete},
	{"list state in windows evicted by the watermark", "SELECT * FROM (SELECT window.start AS w, k, collect_list(try_element_at(a, 1)) AS l, sort_array(collect_set(try_element_at(a, 1))) AS e FROM %[1]s WATERMARK ts DELAY OF INTERVAL 0 SECONDS GROUP BY window(ts, '3 seconds'), k) WHERE w < timestamp_seconds(900)", arrowstream.Append},
	{"distinct arrays", "SELECT DISTINCT a FROM %[1]s", arrowstream.Complete},
	{"distinct struct of array", "SELECT DISTINCT named_struct('a', a, 'n', size(a)) AS s FROM %[1]s", arrowstream.Complete},
	{"streaming OVER partitioned by an array", "SELECT * FROM (SELECT k, a, ts, count(*) OVER w AS n, max(try_element_at(a, 1)) OVER w AS mx FROM %[1]s WATERMARK ts DELAY OF INTERVAL 0 SECONDS WINDOW w AS (PARTITION BY a ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)) WHERE k <> 'zz'", arrowstream.Append},
	{"top-1 per array", "SELECT k, a, ts FROM %[1]s QUALIFY row_number() OVER (PARTITION BY a ORDER BY ts) = 1", arrowstream.Update},
	{"join on an array", "SELECT l.k AS lk, r.k AS rk, l.a AS la, r.a AS ra FROM %[1]s AS l JOIN %[2]s AS r ON l.a = r.a", arrowstream.Append},
	{"join carrying arrays", "SELECT l.k, l.a AS la, named_struct('a', r.a) AS rs FROM %[1]s AS l JOIN %[2]s AS r ON l.k = r.k", arrowstream.Append},
}

// pusher, the last input, moves the watermark past every window the
// queries compare (they leave out windows from 900 s on).
var pusher = st.Row{"zz", nil, sec(1000)}

// nestedSchema: k, a ARRAY<DOUBLE>, ts.
func nestedSchema(t *testing.T) *arrow.Schema {
	return st.Schema(t, "k", vector.String, "a", arrow.ListOf(arrow.PrimitiveTypes.Float64), "ts", vector.Timestamp)
}

// Streaming aggregation, DISTINCT aggregates and stream-stream joins keep
// ARRAY and STRUCT keys and values in state, with Spark's grouping
// equality for keys (NaN = NaN, -0.0 = 0.0, NULL elements equal) and the
// input's bits for values, across restarts: each answer equals the batch
// answer of the same query, bit for bit.
func TestStreamingNestedState(t *testing.T) {
	a := func(vs ...any) []any { return vs }
	epochs := [][2][]st.Row{
		{{
			{"a", a(negZero, 1.0), sec(1)}, {"b", a(nanPayload), sec(2)}, {"c", a(), sec(3)},
			{"d", nil, sec(4)}, {"e", a(nil, math.Inf(1)), sec(5)},
		}, {
			{"a", a(0.0, 1.0), sec(1)}, {"x", a(nanNeg), sec(2)},
		}},
		{{
			{"f", a(0.0, 1.0), sec(6)}, {"b", a(math.NaN()), sec(7)}, {"c", a(), sec(8)}, {"a", a(nil, math.Inf(1)), sec(9)},
		}, {
			{"e", a(nil, math.Inf(1)), sec(6)}, {"y", a(), sec(7)}, {"b", a(negZero), sec(8)},
		}},
		{{{"g", a(negZero, 1.0), sec(10)}}, {{"z", a(negZero, 1.0), sec(10)}}},
		{{pusher}, nil},
	}
	for _, provider := range []string{"memory", "pebble"} {
		// dropDuplicates on an array keeps the first row of each array with
		// its bits, as Spark's streaming deduplication passes rows through:
		// every later row repeats one of the first epoch's ([0, 1] repeats
		// [-0.0, 1], NaN repeats the NaN with a payload). (A batch
		// dropDuplicates is an aggregation whose key comes out normalized, in
		// Spark too, so it is no oracle here.)
		t.Run(provider+"/dropDuplicates on an array", func(t *testing.T) {
			runFloatStateCase(t, floatStateCase{
				mode: arrowstream.Append, schema: nestedSchema(t), epochs: epochs, want: epochs[0][0], provider: provider,
				streamDF: func(s *arrowstream.Session) *arrowstream.DataFrame { return s.ReadStream("input").DropDuplicates("a") },
			})
		})
		// Session windows by an array key (batch plans no session
		// window: every key's rows before 900 s fall in one session, so
		// the batch aggregation by key is the oracle).
		t.Run(provider+"/session window by an array", func(t *testing.T) {
			runFloatStateCase(t, floatStateCase{
				mode: arrowstream.Complete, schema: nestedSchema(t), epochs: epochs, provider: provider,
				stream: "SELECT a, n, mk FROM (SELECT a, session_window(ts, '100 seconds') AS w, count(*) AS n, max(k) AS mk FROM STREAM input WHERE ts < timestamp_seconds(900) GROUP BY a, session_window(ts, '100 seconds'))",
				batch:  "SELECT a, count(*) AS n, max(k) AS mk FROM input_t WHERE ts < timestamp_seconds(900) GROUP BY a",
			})
		})
		for _, q := range nestedQueries {
			t.Run(provider+"/"+q.name, func(t *testing.T) {
				runFloatStateCase(t, floatStateCase{
					mode: q.mode, schema: nestedSchema(t), epochs: epochs, provider: provider,
					stream: fmt.Sprintf(q.sql, "STREAM input", "STREAM other"),
					batch:  fmt.Sprintf(q.sql, "input_t", "other_t"),
				})
			})
		}
	}
}

// TestStreamingNestedStateProperty runs the nested queries over random
// arrays (NULL arrays and elements, NaNs with and without payload, -0.0
// and 0.0, empty arrays) in random epochs with a restart between each,
// against the batch answer. NESTED_STATE_SEEDS raises the number of seeds
// (default 3, kept small for CI).
func TestStreamingNestedStateProperty(t *testing.T) {
	pool := []any{nil, negZero, 0.0, nanPayload, nanNeg, math.NaN(), 1.0, math.Inf(-1)}
	seeds := envInt(t, "NESTED_STATE_SEEDS", 3)
	for seed := 1; seed <= seeds; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 20))
		randArray := func() any {
			if r.IntN(8) == 0 {
				return nil
			}
			n := r.IntN(3)
			out := make([]any, n)
			for i := range out {
				out[i] = pool[r.IntN(len(pool))]
			}
			return out
		}
		epochs := make([][2][]st.Row, 2+r.IntN(2))
		ts := int64(0)
		for e := range epochs {
			for side := range 2 {
				for range 1 + r.IntN(5) {
					ts++
					epochs[e][side] = append(epochs[e][side], st.Row{string(rune('a' + r.IntN(3))), randArray(), sec(ts)})
				}
			}
		}
		epochs = append(epochs, [2][]st.Row{{pusher}, nil})
		for _, q := range nestedQueries {
			t.Run(fmt.Sprintf("seed %d/%s", seed, q.name), func(t *testing.T) {
				runFloatStateCase(t, floatStateCase{
					mode: q.mode, schema: nestedSchema(t), epochs: epochs,
					stream: fmt.Sprintf(q.sql, "STREAM input", "STREAM other"),
					batch:  fmt.Sprintf(q.sql, "input_t", "other_t"),
				})
			})
		}
	}
}

// envInt reads a positive integer from the environment variable name, or
// returns def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
