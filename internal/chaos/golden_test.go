package chaos

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

var updateGolden = flag.Bool("update-golden", false, "regenerate testdata/golden (checkpoints written by this version)")

// The golden checkpoints: queries stopped after their first epochs, kept
// in testdata/golden/v1/<query>. Every later version must restore them and
// continue to the recorded answer (testdata/golden/v1/expected.json), or
// refuse them with a clear error; testdata/golden/future holds a copy
// whose newest offset entry claims a later format, which must be refused.
const (
	goldenDir    = "testdata/golden/v1"
	goldenFuture = "testdata/golden/future"
)

// goldenQueries cover the stateful operators whose state a checkpoint
// carries: a windowed aggregation with a watermark (state, watermark in the
// offset log, eviction), a streaming deduplication with a watermark, a
// running aggregation in Update mode as a view (view files in the sink),
// and a stream-stream join (two sources, join state on both sides).
var goldenQueries = []fixtureQuery{
	{name: "windowed", mode: arrowstream.Append, build: func(s *arrowstream.Session) *arrowstream.DataFrame {
		return s.ReadStream("events").WithWatermark("ts", "10 seconds").
			GroupBy("window(ts, '10 seconds') AS w").Agg("count(*) AS n", "sum(value) AS s")
	}},
	{name: "dedup", mode: arrowstream.Append, build: func(s *arrowstream.Session) *arrowstream.DataFrame {
		return s.ReadStream("events").WithWatermark("ts", "10 seconds").DropDuplicates("value", "ts")
	}},
	{name: "counts", mode: arrowstream.Update, view: true, build: func(s *arrowstream.Session) *arrowstream.DataFrame {
		return s.ReadStream("events").GroupBy("k").Agg("count(*) AS n", "sum(value) AS s")
	}},
	{name: "join", mode: arrowstream.Append, second: true, build: func(s *arrowstream.Session) *arrowstream.DataFrame {
		right := s.ReadStream("events2").Select("value AS v2", "ts AS ts2").WithWatermark("ts2", "10 seconds")
		return s.ReadStream("events").WithWatermark("ts", "10 seconds").
			Join(right, "value = v2 AND ts2 BETWEEN ts - INTERVAL 5 SECONDS AND ts + INTERVAL 5 SECONDS", "inner").
			Select("value", "k", "ts2")
	}},
}

// The input: rows 0..59 in six epochs before the checkpoint was kept,
// then 60..99 in two more after the restore; every third value twice.
var (
	goldenBefore = steps(0, 10, 6)
	goldenAfter  = steps(60, 20, 2)
)

func goldenSource(mem memory.Allocator) *genSource { return &genSource{mem: mem, dupEvery: 3} }

// TestGolden restores each golden checkpoint (a copy) and continues it to
// the recorded answer. With -update-golden it first regenerates them.
func TestGolden(t *testing.T) {
	if *updateGolden {
		generateGolden(t)
	}
	var expected map[string][]string
	if err := json.Unmarshal(readFile(t, filepath.Join(goldenDir, "expected.json")), &expected); err != nil {
		t.Fatal(err)
	}
	for _, q := range goldenQueries {
		t.Run(q.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			copyDir(t, filepath.Join(goldenDir, q.name), dir)
			got, err := runFixture(t, mem, dir, q, goldenSource(mem), goldenAfter)
			if err != nil {
				t.Fatalf("restore the golden checkpoint of %s: %v", q.name, err)
			}
			if !slices.Equal(got, expected[q.name]) {
				t.Fatalf("%s after restoring:\ngot  %q\nwant %q", q.name, got, expected[q.name])
			}
		})
	}
}

// TestGoldenFutureRefused restores the future-format copy: the restart
// must fail with an error naming the file and the newer format.
func TestGoldenFutureRefused(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	copyDir(t, goldenFuture, dir)
	_, err := runFixture(t, mem, dir, goldenQueries[0], goldenSource(mem), goldenAfter)
	if err == nil {
		t.Fatal("a checkpoint in a newer format was accepted")
	}
	if !errors.Is(err, checkpoint.ErrNewerFormat) || !strings.Contains(err.Error(), filepath.Join(dir, "offsets")) ||
		!strings.Contains(err.Error(), "upgrade Arrowstream") {
		t.Fatalf("unclear refusal: %v", err)
	}
	t.Log(strings.ReplaceAll(err.Error(), dir, "<checkpoint>"))
}

// generateGolden rewrites testdata/golden: each query runs goldenBefore
// and stops (the kept checkpoint); a copy continues with goldenAfter (the
// expected answer), which must equal one uninterrupted run over the same
// input.
func generateGolden(t *testing.T) {
	for _, d := range []string{goldenDir, goldenFuture} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	expected := map[string][]string{}
	for _, q := range goldenQueries {
		dir := filepath.Join(goldenDir, q.name)
		if _, err := runFixture(t, mem, dir, q, goldenSource(mem), goldenBefore); err != nil {
			t.Fatal(err)
		}
		cont := t.TempDir()
		copyDir(t, dir, cont)
		got, err := runFixture(t, mem, cont, q, goldenSource(mem), goldenAfter)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := runFixture(t, mem, t.TempDir(), q, goldenSource(mem), append(slices.Clone(goldenBefore), goldenAfter...))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, whole) {
			t.Fatalf("%s: restored run %q differs from the uninterrupted one %q", q.name, got, whole)
		}
		if len(got) == 0 {
			t.Fatalf("%s: empty answer", q.name)
		}
		expected[q.name] = got
	}
	b, _ := json.MarshalIndent(expected, "", "  ")
	writeFile(t, filepath.Join(goldenDir, "expected.json"), append(b, '\n'))
	copyDir(t, filepath.Join(goldenDir, goldenQueries[0].name), goldenFuture)
	epochs, err := os.ReadDir(filepath.Join(goldenFuture, "offsets"))
	if err != nil || len(epochs) == 0 {
		t.Fatalf("no offsets in %s: %v", goldenFuture, err)
	}
	futureLogVersion(t, filepath.Join(goldenFuture, "offsets", latestName(epochs)))
}

// latestName is the highest numeric name among entries.
func latestName(ents []os.DirEntry) string {
	best, bestN := "", -1
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > bestN {
			best, bestN = e.Name(), n
		}
	}
	return best
}
