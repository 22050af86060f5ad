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
func TestStreamStreamJoinProperty(t *testing.T) {
	const query = `SELECT lk, CAST(lt AS BIGINT) AS lt, CAST(rt AS BIGINT) AS rt FROM
	  (SELECT _1 AS lk, lt FROM STREAM leftInput WATERMARK timestamp_seconds(_2) AS lt DELAY OF INTERVAL 10 SECONDS) AS l
	  JOIN (SELECT _1 AS rk, rt FROM STREAM rightInput WATERMARK timestamp_seconds(_2) AS rt DELAY OF INTERVAL 10 SECONDS) AS r
	  ON lk = rk AND lt BETWEEN rt - INTERVAL 8 SECONDS AND rt + INTERVAL 3 SECONDS`
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
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
			var want [][]int64
			for _, l := range kept[0] {
				for _, r := range kept[1] {
					if l.k == r.k && l.t >= r.t-8 && l.t <= r.t+3 {
						want = append(want, []int64{l.k, l.t, r.t})
					}
				}
			}
			if want == nil {
				want = [][]int64{}
			}
			steps = append(steps, map[string]any{"action": "check", "mode": "answer", "rows": want})
			sc := []map[string]any{{
				"name":    fmt.Sprint("join_property_", seed),
				"sources": map[string]any{"leftInput": cols(), "rightInput": cols()},
				"query":   map[string]any{"sql": query, "output_mode": "append"},
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

func cols() []map[string]string {
	return []map[string]string{{"name": "_1", "type": "bigint"}, {"name": "_2", "type": "bigint"}}
}

// joinScenarios complement stream_stream_join.json: a right outer join,
// string and null keys with a residual, join keys of different integer
// widths, a left outer join whose condition rejects some left rows by
// themselves (emitted with nulls at once, not stored).
const joinScenarios = `[
 {
  "name": "ss_join_right_outer_window",
  "sources": {
   "leftInput": [
    {
     "name": "value",
     "type": "int"
    }
   ],
   "rightInput": [
    {
     "name": "value",
     "type": "int"
    }
   ]
  },
  "query": {
   "sql": "SELECT key, CAST(window.end AS BIGINT), leftValue, rightValue FROM (SELECT value AS key, window(leftTime, '10 second') AS window, value * 2 AS leftValue FROM STREAM leftInput WATERMARK timestamp_seconds(value) AS leftTime DELAY OF INTERVAL 10 SECONDS) AS l RIGHT OUTER JOIN (SELECT value AS key, window(rightTime, '10 second') AS window, value * 3 AS rightValue FROM STREAM rightInput WATERMARK timestamp_seconds(value) AS rightTime DELAY OF INTERVAL 10 SECONDS) AS r USING (key, window)",
   "output_mode": "append"
  },
  "steps": [
   {
    "action": "start"
   },
   {
    "action": "multi_add",
    "adds": [
     {
      "source": "leftInput",
      "rows": [
       [
        1
       ],
       [
        2
       ],
       [
        3
       ],
       [
        4
       ],
       [
        5
       ]
      ]
     },
     {
      "source": "rightInput",
      "rows": [
       [
        3
       ],
       [
        4
       ],
       [
        5
       ],
       [
        6
       ],
       [
        7
       ]
      ]
     }
    ]
   },
   {
    "action": "check",
    "mode": "new_answer",
    "rows": [
     [
      3,
      10,
      6,
      9
     ],
     [
      4,
      10,
      8,
      12
     ],
     [
      5,
      10,
      10,
      15
     ]
    ]
   },
   {
    "action": "multi_add",
    "adds": [
     {
      "source": "leftInput",
      "rows": [
       [
        21
       ]
      ]
     },
     {
      "source": "rightInput",
      "rows": [
       [
        22
       ]
      ]
     }
    ]
   },
   {
    "action": "check",
    "mode": "new_answer",
    "rows": [
     [
      6,
      10,
      null,
      18
     ],
     [
      7,
      10,
      null,
      21
     ]
    ]
   },
   {
    "action": "assert_state_rows",
    "total": [
     2
    ],
    "updated": [
     12
    ],
    "dropped_by_watermark": [
     0
    ]
   },
   {
    "action": "add",
    "source": "rightInput",
    "rows": [
     [
      21
     ],
     [
      5
     ]
    ]
   },
   {
    "action": "check",
    "mode": "new_answer",
    "rows": [
     [
      21,
      30,
      42,
      63
     ]
    ]
   },
   {
    "action": "assert_state_rows",
    "total": [
     3
    ],
    "updated": [
     1
    ],
    "dropped_by_watermark": [
     1
    ]
   }
  ]
 },
 {
  "name": "ss_join_string_and_null_keys",
  "sources": {
   "a": [
    {
     "name": "k",
     "type": "string"
    },
    {
     "name": "v",
     "type": "int"
    }
   ],
   "b": [
    {
     "name": "k",
     "type": "string"
    },
    {
     "name": "w",
     "type": "int"
    }
   ]
  },
  "query": {
   "sql": "SELECT x.k, v, w FROM STREAM a AS x JOIN STREAM b AS y ON x.k = y.k AND v < w",
   "output_mode": "append"
  },
  "steps": [
   {
    "action": "start"
   },
   {
    "action": "multi_add",
    "adds": [
     {
      "source": "a",
      "rows": [
       [
        "p",
        1
       ],
       [
        null,
        2
       ],
       [
        "q",
        50
       ]
      ]
     },
     {
      "source": "b",
      "rows": [
       [
        "p",
        10
       ],
       [
        null,
        20
       ],
       [
        "q",
        5
       ]
      ]
     }
    ]
   },
   {
    "action": "check",
    "mode": "answer",
    "rows": [
     [
      "p",
      1,
      10
     ]
    ]
   },
   {
    "action": "add",
    "source": "a",
    "rows": [
     [
      "p",
      3
     ],
     [
      "q",
      1
     ],
     [
      null,
      1
     ]
    ]
   },
   {
    "action": "check",
    "mode": "answer",
    "rows": [
     [
      "p",
      1,
      10
     ],
     [
      "p",
      3,
      10
     ],
     [
      "q",
      1,
      5
     ]
    ]
   },
   {
    "action": "assert_state_rows",
    "total": [
     9
    ],
    "updated": [
     9
    ],
    "dropped_by_watermark": [
     0
    ]
   }
  ]
 },
 {
  "name": "ss_join_mixed_int_keys",
  "sources": {
   "a": [
    {
     "name": "k",
     "type": "int"
    }
   ],
   "b": [
    {
     "name": "k",
     "type": "bigint"
    }
   ]
  },
  "query": {
   "sql": "SELECT x.k, y.k AS k2 FROM STREAM a AS x JOIN STREAM b AS y ON x.k = y.k",
   "output_mode": "append"
  },
  "steps": [
   {
    "action": "start"
   },
   {
    "action": "add",
    "source": "a",
    "rows": [
     [
      1
     ],
     [
      2
     ]
    ]
   },
   {
    "action": "check",
    "mode": "answer",
    "rows": []
   },
   {
    "action": "add",
    "source": "b",
    "rows": [
     [
      2
     ],
     [
      3
     ]
    ]
   },
   {
    "action": "check",
    "mode": "answer",
    "rows": [
     [
      2,
      2
     ]
    ]
   }
  ]
 },
 {
  "name": "ss_join_left_outer_left_only_condition",
  "sources": {
   "leftInput": [
    {
     "name": "value",
     "type": "int"
    }
   ],
   "rightInput": [
    {
     "name": "value",
     "type": "int"
    }
   ]
  },
  "query": {
   "sql": "SELECT l.key, CAST(l.window.end AS BIGINT), leftValue, rightValue FROM (SELECT value AS key, window(leftTime, '10 second') AS window, value * 2 AS leftValue FROM STREAM leftInput WATERMARK timestamp_seconds(value) AS leftTime DELAY OF INTERVAL 10 SECONDS) AS l LEFT OUTER JOIN (SELECT value AS key, window(rightTime, '10 second') AS window, value * 3 AS rightValue FROM STREAM rightInput WATERMARK timestamp_seconds(value) AS rightTime DELAY OF INTERVAL 10 SECONDS) AS r ON l.key = r.key AND l.window = r.window AND leftValue > 4",
   "output_mode": "append"
  },
  "steps": [
   {
    "action": "start"
   },
   {
    "action": "multi_add",
    "adds": [
     {
      "source": "leftInput",
      "rows": [
       [
        1
       ],
       [
        2
       ],
       [
        3
       ],
       [
        4
       ],
       [
        5
       ]
      ]
     },
     {
      "source": "rightInput",
      "rows": [
       [
        3
       ],
       [
        4
       ],
       [
        5
       ],
       [
        6
       ],
       [
        7
       ]
      ]
     }
    ]
   },
   {
    "action": "check",
    "mode": "new_answer",
    "rows": [
     [
      3,
      10,
      6,
      9
     ],
     [
      4,
      10,
      8,
      12
     ],
     [
      5,
      10,
      10,
      15
     ],
     [
      1,
      10,
      2,
      null
     ],
     [
      2,
      10,
      4,
      null
     ]
    ]
   },
   {
    "action": "assert_state_rows",
    "total": [
     8
    ],
    "updated": [
     8
    ],
    "dropped_by_watermark": [
     0
    ]
   },
   {
    "action": "multi_add",
    "adds": [
     {
      "source": "leftInput",
      "rows": [
       [
        21
       ]
      ]
     },
     {
      "source": "rightInput",
      "rows": [
       [
        22
       ]
      ]
     }
    ]
   },
   {
    "action": "check",
    "mode": "new_answer",
    "rows": []
   },
   {
    "action": "assert_state_rows",
    "total": [
     2
    ],
    "updated": [
     2
    ],
    "dropped_by_watermark": [
     0
    ]
   }
  ]
 }
]`

func TestStreamStreamJoinScenarios(t *testing.T) {
	scenarios, err := conformance.Decode([]byte(joinScenarios))
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
