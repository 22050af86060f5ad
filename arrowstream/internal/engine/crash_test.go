package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"go.uber.org/goleak"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// The crash test runs a checkpointed query in a child process (this test
// binary, re-executed), kills it with SIGKILL at random moments — some of
// them from inside checkpoint writes, through the writer's fault hook — and
// restarts it, until the query has produced every epoch. The durable sink
// must then hold exactly what an uninterrupted run produces: nothing lost,
// nothing twice.

const (
	crashEnvDir      = "ARROWSTREAM_CRASH_DIR"
	crashEnvWorkload = "ARROWSTREAM_CRASH_WORKLOAD"
	crashEnvSeed     = "ARROWSTREAM_CRASH_SEED"
	crashEpochs      = 400
	crashRowsPerEp   = 250
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnvDir); dir != "" {
		os.Exit(crashChild(dir, os.Getenv(crashEnvWorkload), os.Getenv(crashEnvSeed)))
	}
	// Every test must leave no goroutine running (queries stopped,
	// sources closed).
	goleak.VerifyTestMain(m)
}

// fileSink is an idempotent durable sink for the crash test: epoch N is
// written once, atomically, to out/N.json; a replayed epoch is ignored.
type fileSink struct {
	dir string
	w   *checkpoint.Writer
}

func (s *fileSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	recs, err := vector.Drain(ctx, data)
	if err != nil {
		return err
	}
	rows := vt.RowsOf(recs...)
	vector.ReleaseRecords(recs)
	p := filepath.Join(s.dir, strconv.FormatInt(epoch, 10)+".json")
	if _, err := os.Stat(p); err == nil {
		return nil // already committed: idempotent
	}
	b, _ := json.Marshal(rows)
	if err := s.w.WriteFile(p, b, false); err != nil && !errors.Is(err, checkpoint.ErrExists) {
		return err
	}
	return nil
}

// crashChild runs the query until crashEpochs epochs are in the sink.
func crashChild(dir, workload, seedText string) int {
	if workload == "continuous" {
		return continuousCrashChild(dir, seedText)
	}
	writer, r := crashWriter(seedText, 60)
	mem := memory.NewGoAllocator()
	src, _ := rate.NewRateMicroBatchSource(mem, rate.RateMicroBatchOptions{RowsPerBatch: crashRowsPerEp, StartTimestampMs: 0, AdvanceMillisPerBatch: 1000})
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	var exec Executor = &funcExecutor{fn: func(_ context.Context, _ stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
		return vector.NewProject(mem, in[0], []vector.NamedExpr{vector.As(vector.Col("value"), "value")})
	}}
	mode := stream.Append
	if strings.HasPrefix(workload, "count") {
		agg, err := stateful.NewAggregate(mem, 0, rate.RateSchema, vector.AggregateSpec{
			GroupBy:    []vector.NamedExpr{vector.As(vector.Mod(vector.Col("value"), vector.Lit(int64(7))), "k")},
			Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}, {Func: vector.AggSum, Args: []vector.Expr{vector.Col("value")}, Name: "s"}},
		}, stream.Complete, -1)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		exec = crashStateExecutor(workload, mem, agg, writer, r, dir)
		mode = stream.Complete
	}
	_ = mode
	conf := map[string]string{stream.ConfShufflePartitions: "3"}
	if workload == "count-pebble-bounded" {
		// No group kept live between epochs: every epoch reads its
		// groups back from Pebble.
		conf[stream.ConfStateStoreProvider], conf[stream.ConfPebbleLiveStateBytes] = "pebble", "0"
	}
	q, err := startQuery(context.Background(), "crash", Config{
		CheckpointDir: filepath.Join(dir, "checkpoint"), Sources: []stream.Source{src}, SourceDescriptions: []string{"rate"},
		Sink: &fileSink{dir: out, w: writer}, SinkDescription: "files", Exec: exec, Trigger: processingTime(2 * time.Millisecond),
		Conf: conf, Writer: writer, MinBatchesToRetain: 10, NoDataBatches: true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for {
		if n, _ := os.ReadDir(out); countJSON(n) >= crashEpochs {
			q.Stop()
			return 0
		}
		if !q.IsActive() {
			fmt.Fprintln(os.Stderr, q.Exception())
			return 3
		}
		time.Sleep(time.Millisecond)
	}
}

// crashWriter returns the child's checkpoint Writer: seeded by seedText,
// it kills the process, half the time, at a random step of one of the
// first maxCountdown writes reaching that step. The random source, seeded
// likewise, serves the child's other choices.
func crashWriter(seedText string, maxCountdown int) (*checkpoint.Writer, *rand.Rand) {
	seed, _ := strconv.ParseInt(seedText, 10, 64)
	r := rand.New(rand.NewSource(seed))
	killAt := WriteStepNone
	if r.Intn(2) == 0 {
		killAt = checkpoint.WriteStep(r.Intn(4))
	}
	countdown := r.Intn(maxCountdown)
	return &checkpoint.Writer{Hook: func(step checkpoint.WriteStep, _ string) error {
		if step == killAt {
			if countdown == 0 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			countdown--
		}
		return nil
	}}, r
}

// WriteStepNone means the child does not kill itself inside a write.
const WriteStepNone = checkpoint.WriteStep(-1)

func countJSON(ents []os.DirEntry) int {
	n := 0
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".json" && e.Name()[0] != '.' {
			n++
		}
	}
	return n
}

// readSink returns the sink's epochs in order (the first crashEpochs).
func readSink(t *testing.T, dir string) [][]vt.Row {
	t.Helper()
	var epochs [][]vt.Row
	for e := 0; e < crashEpochs; e++ {
		b, err := os.ReadFile(filepath.Join(dir, "out", strconv.Itoa(e)+".json"))
		if err != nil {
			t.Fatalf("epoch %d missing from the Sink: %v", e, err)
		}
		var raw [][]float64 // every column of both workloads is an integer
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("epoch %d: %v", e, err)
		}
		rows := make([]vt.Row, len(raw))
		for i, r := range raw {
			for _, v := range r {
				rows[i] = append(rows[i], int64(v))
			}
		}
		epochs = append(epochs, rows)
	}
	return epochs
}

// runCrashLoop runs the crash loop and checks the sink; it returns the
// directory of the run (checkpoint, sink).
func runCrashLoop(t *testing.T, workload string, kills int) string {
	dir, killed := crashLoop(t, workload, kills)
	got := readSink(t, dir)
	want := expectedCrashOutput(workload)
	for e := range want {
		if !vt.RowsEqual(vt.SortRows(want[e]), vt.SortRows(got[e])) {
			t.Fatalf("%s: epoch %d after %d kills:\n%swant\n%s", workload, e, killed, vt.FormatRows(got[e]), vt.FormatRows(want[e]))
		}
	}
	t.Logf("%s: %d kills, %d epochs × %d rows: 0 lost, 0 duplicated", workload, killed, crashEpochs, crashRowsPerEp)
	return dir
}

// crashLoop runs the workload's child, killing it kills times, until it
// finishes; it returns the directory holding its output and the kills.
func crashLoop(t *testing.T, workload string, kills int) (string, int) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := rand.New(rand.NewSource(int64(len(workload)) * 7919))
	// Bounded by cycles, not by wall time: a loaded machine only slows the
	// children down, and each wait below watches for progress.
	killed, finished := 0, false
	for cycle := 0; !finished; cycle++ {
		if cycle > 4*kills+20 {
			t.Fatalf("crash loop did not finish in %d cycles (%d kills)", cycle, killed)
		}
		child, err := testutil.StartChild(exe, crashEnvDir+"="+dir, crashEnvWorkload+"="+workload, crashEnvSeed+"="+strconv.Itoa(cycle))
		if err != nil {
			t.Fatal(err)
		}
		if killed < kills {
			select {
			case err := <-child.Done():
				finished = checkChildExit(t, err, child.Stderr.String())
				if !finished {
					killed++ // killed itself inside a checkpoint write
				}
			case <-time.After(crashKillDelay(workload, r)):
				child.Kill()
				killed++
			}
			continue
		}
		err = child.Wait(testutil.TreeProgress(dir), 0)
		if errors.Is(err, testutil.ErrStalled) {
			t.Fatalf("child made no progress: %v\n%s", err, child.Stderr.String())
		}
		finished = checkChildExit(t, err, child.Stderr.String())
	}
	if killed < kills {
		t.Fatalf("only %d kills before the query finished; the test needs %d", killed, kills)
	}
	return dir, killed
}

// checkChildExit reports whether the child finished; a child killed by
// its own fault hook (SIGKILL) counts as a crash, anything else fails.
func checkChildExit(t *testing.T, err error, stderr string) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if testutil.KilledBySIGKILL(err) {
		return false
	}
	t.Fatalf("child failed: %v\n%s", err, stderr)
	return false
}

// expectedCrashOutput is what an uninterrupted run writes.
func expectedCrashOutput(workload string) [][]vt.Row {
	out := make([][]vt.Row, crashEpochs)
	for e := 0; e < crashEpochs; e++ {
		lo, hi := int64(e*crashRowsPerEp), int64((e+1)*crashRowsPerEp)
		if !strings.HasPrefix(workload, "count") {
			for v := lo; v < hi; v++ {
				out[e] = append(out[e], vt.Row{v})
			}
			continue
		}
		counts, sums := map[int64]int64{}, map[int64]int64{}
		for v := int64(0); v < hi; v++ {
			counts[v%7]++
			sums[v%7] += v
		}
		keys := make([]int64, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			out[e] = append(out[e], vt.Row{k, counts[k], sums[k]})
		}
	}
	return out
}

func TestCrashLoopExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop: skipped in -short")
	}
	for _, w := range []string{"passthrough", "count"} {
		t.Run(w, func(t *testing.T) { runCrashLoop(t, w, 50) })
	}
}
