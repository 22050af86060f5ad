package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// continuousCrashRows is how many rows the continuous crash child writes
// before it finishes.
const continuousCrashRows = crashEpochs * crashRowsPerEp

// continuousCrashChild runs a continuous query (rate-micro-batch source,
// polled; 10 ms epochs) into the idempotent file sink until it holds
// continuousCrashRows rows, killing itself now and then inside a
// checkpoint write as crashChild does.
func continuousCrashChild(dir, seedText string) int {
	writer, _ := crashWriter(seedText, 40)
	mem := memory.NewGoAllocator()
	src, _ := rate.NewRateMicroBatchSource(mem, rate.RateMicroBatchOptions{RowsPerBatch: crashRowsPerEp, AdvanceMillisPerBatch: 1000})
	out := filepath.Join(dir, "out")
	os.MkdirAll(out, 0o755)
	exec := &funcExecutor{fn: func(_ context.Context, _ stream.EpochInfo, in []vector.Operator) (vector.Operator, error) {
		return vector.NewProject(mem, in[0], []vector.NamedExpr{vector.As(vector.Col("value"), "value")})
	}}
	q, err := startQuery(context.Background(), "crash", Config{
		CheckpointDir: filepath.Join(dir, "checkpoint"), Sources: []stream.Source{src}, SourceDescriptions: []string{"rate"},
		Sink: &fileSink{dir: out, w: writer}, SinkDescription: "files", Exec: exec, Trigger: Trigger{Kind: TriggerContinuous, Interval: 10 * time.Millisecond},
		Conf: map[string]string{stream.ConfShufflePartitions: "1"}, Writer: writer, MinBatchesToRetain: 10,
		Continuous: ContinuousConfig{MaxPendingBytes: DefaultContinuousMaxPendingBytes, PollInterval: time.Millisecond},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for {
		if n, err := continuousSinkRows(out); err == nil && n >= continuousCrashRows {
			q.Stop()
			return 0
		}
		if !q.IsActive() {
			fmt.Fprintln(os.Stderr, q.Exception())
			return 3
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// continuousSinkRows counts the rows of the sink's epoch files.
func continuousSinkRows(out string) (int, error) {
	vals, err := readContinuousSink(out)
	return len(vals), err
}

// readContinuousSink returns every value in the sink's epoch files, which
// must be numbered 0..n-1 without gaps.
func readContinuousSink(out string) ([]int64, error) {
	ents, err := os.ReadDir(out)
	if err != nil {
		return nil, err
	}
	n := countJSON(ents)
	var vals []int64
	for e := 0; e < n; e++ {
		b, err := os.ReadFile(filepath.Join(out, strconv.Itoa(e)+".json"))
		if err != nil {
			return nil, fmt.Errorf("epoch %d of %d: %w", e, n, err)
		}
		var rows [][]float64
		if err := json.Unmarshal(b, &rows); err != nil {
			return nil, fmt.Errorf("epoch %d: %w", e, err)
		}
		for _, row := range rows {
			vals = append(vals, int64(row[0]))
		}
	}
	return vals, nil
}

// Continuous epochs have no fixed boundaries, so the check is on the
// multiset of all committed rows: exactly the values 0..n-1, once each.
func TestContinuousCrashLoopExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop: skipped in -short")
	}
	dir, killed := crashLoop(t, "continuous", 30)
	vals, err := readContinuousSink(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]bool, len(vals))
	lost, dup := 0, 0
	for _, v := range vals {
		switch {
		case v < 0 || v >= int64(len(vals)):
			lost++ // a value beyond the prefix means one before it is missing
		case seen[v]:
			dup++
		default:
			seen[v] = true
		}
	}
	if len(vals) < continuousCrashRows || lost != 0 || dup != 0 {
		t.Fatalf("after %d kills: %d rows, %d out of sequence (lost before them), %d duplicated", killed, len(vals), lost, dup)
	}
	t.Logf("continuous: %d kills, %d rows: 0 lost, 0 duplicated", killed, len(vals))
}
