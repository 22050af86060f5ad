package conformance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/streamtest/conformance"
)

// TestStreamStreamJoinProperty: random two-sided event streams with bounded
// lateness (a few rows deliberately late) through the inner join
//
//	l.k = r.k AND lt BETWEEN rt - 8s AND rt + 3s, 10 s watermarks on both
//
// must produce exactly the batch join of the rows that were not late when
// they arrived, whatever the state eviction did in between. A row is late
// iff its time ≤ the global watermark (min over the two inputs of max
// time − 10 s, 0 before both have data) computed from the earlier batches.
// The same holds for the left outer join once a final pair of far-future
// rows has moved the watermark past every stored row: each left row not
// joined comes out once, with nulls (the matched flags kept right across
// epochs of the in-memory join state).
func TestStreamStreamJoinProperty(t *testing.T) {
	const query = `SELECT lk, CAST(lt AS BIGINT) AS lt, CAST(rt AS BIGINT) AS rt FROM
	  (SELECT _1 AS lk, lt FROM STREAM leftInput WATERMARK timestamp_seconds(_2) AS lt DELAY OF INTERVAL 10 SECONDS) AS l
	  %s (SELECT _1 AS rk, rt FROM STREAM rightInput WATERMARK timestamp_seconds(_2) AS rt DELAY OF INTERVAL 10 SECONDS) AS r
	  ON lk = rk AND lt BETWEEN rt - INTERVAL 8 SECONDS AND rt + INTERVAL 3 SECONDS`
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for _, outer := range []bool{false, true} {
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("outer=%v/seed%d", outer, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(seed)))
				type ev struct{ k, t int64 }
				var kept [2][]ev
				maxT := [2]int64{-1, -1}
				wm := int64(0)
				steps := []map[string]any{{"action": "start"}}
				now := int64(20)
				for b := 0; b < 40; b++ {
					side := rng.Intn(2)
					name := [2]string{"leftInput", "rightInput"}[side]
					var rows [][]int64
					for i := rng.Intn(4) + 1; i > 0; i-- {
						// Mostly within the 10 s bound of the newest time, some
						// beyond it (late once the watermark has passed them).
						tm := now - int64(rng.Intn(16))
						if tm < 1 {
							tm = 1
						}
						k := int64(rng.Intn(2))
						rows = append(rows, []int64{k, tm})
						if tm*1000 > wm {
							kept[side] = append(kept[side], ev{k, tm})
						}
						maxT[side] = max(maxT[side], tm)
					}
					now += int64(rng.Intn(4))
					steps = append(steps, map[string]any{"action": "add", "source": name, "rows": rows},
						map[string]any{"action": "process_all_available"})
					if maxT[0] >= 0 && maxT[1] >= 0 {
						wm = max(wm, (min(maxT[0], maxT[1])-10)*1000)
					}
				}
				// Flush: one far-future row per side (they join each other).
				far := now + 1000
				steps = append(steps, map[string]any{"action": "multi_add", "adds": []map[string]any{
					{"source": "leftInput", "rows": [][]int64{{99, far}}}, {"source": "rightInput", "rows": [][]int64{{99, far}}}}},
					map[string]any{"action": "process_all_available"})
				want := [][]any{{99, far, far}}
				for _, l := range kept[0] {
					matched := false
					for _, r := range kept[1] {
						if l.k == r.k && l.t >= r.t-8 && l.t <= r.t+3 {
							want = append(want, []any{l.k, l.t, r.t})
							matched = true
						}
					}
					if outer && !matched {
						want = append(want, []any{l.k, l.t, nil})
					}
				}
				steps = append(steps, map[string]any{"action": "check", "mode": "answer", "rows": want})
				sc := []map[string]any{{
					"name":    fmt.Sprint("join_property_", seed),
					"sources": map[string]any{"leftInput": cols(), "rightInput": cols()},
					"query":   map[string]any{"sql": fmt.Sprintf(query, map[bool]string{false: "JOIN", true: "LEFT OUTER JOIN"}[outer]), "output_mode": "append"},
					"steps":   steps,
				}}
				data, err := json.Marshal(sc)
				if err != nil {
					t.Fatal(err)
				}
				scenarios, err := conformance.Decode(data)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				r := &conformance.Runner{Out: &out, TempDir: t.TempDir(), StepTimeout: 30 * time.Second}
				if sum := r.RunAll(scenarios); sum.Passed != 1 {
					t.Fatalf("%s\nscenario: %s", out.String(), data)
				}
			})
		}
	}
}

func cols() []map[string]string {
	return []map[string]string{{"name": "_1", "type": "bigint"}, {"name": "_2", "type": "bigint"}}
}

// TestStreamStreamJoinScenarios runs scenarios that complement
// stream_stream_join.json: a right outer join, string and null keys with a
// residual, join keys of different integer widths, a left outer join whose
// condition rejects some left rows by themselves (emitted with nulls at
// once, not stored).
func TestStreamStreamJoinScenarios(t *testing.T) {
	scenarios, err := conformance.Load("testdata/stream_stream_join_extra.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, restart := range []bool{false, true} {
		var out bytes.Buffer
		r := &conformance.Runner{Out: &out, RestartAfterChecks: restart, TempDir: t.TempDir(), StepTimeout: 30 * time.Second}
		if sum := r.RunAll(scenarios); sum.Passed != len(scenarios) {
			t.Errorf("restart=%v:\n%s", restart, out.String())
		}
	}
}
