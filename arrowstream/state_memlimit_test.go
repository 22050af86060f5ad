package arrowstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/vector"
)

// The memory-limit test runs a running count over more distinct keys than
// a 64 MiB heap holds, in a child process with GOMEMLIMIT=64MiB, once with
// each state store provider. The child measures its peak Go heap and
// checks every emitted count. The Pebble run must finish correctly with a
// heap near the limit; the memory run shows the state outgrowing it.

const (
	memLimitEnvProvider = "ARROWSTREAM_MEMLIMIT_PROVIDER"
	memLimitEnvKeys     = "ARROWSTREAM_MEMLIMIT_KEYS"
	memLimitEnvDir      = "ARROWSTREAM_MEMLIMIT_DIR"
	// For runs by hand (the 50 M-key run of docs/operations.md): rows per
	// epoch (default keys/6) and passes over the keys (default 3).
	memLimitEnvPerEpoch = "ARROWSTREAM_MEMLIMIT_PER_EPOCH"
	memLimitEnvPasses   = "ARROWSTREAM_MEMLIMIT_PASSES"
	// memLimitEnvLive sets stateStore.pebble.liveStateBytes.
	memLimitEnvLive = "ARROWSTREAM_MEMLIMIT_LIVE_BYTES"
)

// memLimitResult is what the child prints (one JSON line).
type memLimitResult struct {
	Epochs       int    `json:"epochs"`
	Rows         int64  `json:"rows"`
	StateRows    int64  `json:"stateRows"`
	PeakHeap     uint64 `json:"peakHeap"`
	PeakRSS      int64  `json:"peakRSS"`
	Error        string `json:"error,omitempty"`
	MemoryMetric int64  `json:"memoryUsedBytes"`
	// Metrics are the last epoch's state store figures.
	Metrics map[string]int64 `json:"customMetrics,omitempty"`
}

func TestStateStoreMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess memory-limit runs: skipped in -short")
	}
	if raceEnabled {
		// The race detector's shadow memory would be measured, not the
		// state store's; .ci/run runs this test without -race.
		t.Skip("memory limits are not meaningful under the race detector")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Enough keys that the memory provider's live state outgrows the
	// limit (300K did until session 35, when the state's snapshots stopped
	// taking a second live view: 53 MiB then), in epochs of 60K rows (a
	// divisor of keys, which the count check needs) so that one epoch's
	// batch stays small next to the limit.
	const keys, perEpoch = 960_000, 60_000
	const limit = 64 << 20
	run := func(provider string) memLimitResult {
		// No wall-clock limit (the run takes minutes at load 40): the child
		// is killed only when neither its checkpoint nor its log moves.
		dir := t.TempDir()
		cmd := exec.Command(exe, "-test.run=^TestStateStoreMemoryLimitChild$")
		cmd.Env = append(os.Environ(), "GOMEMLIMIT=64MiB", memLimitEnvProvider+"="+provider,
			memLimitEnvKeys+"="+strconv.Itoa(keys), memLimitEnvPerEpoch+"="+strconv.Itoa(perEpoch), memLimitEnvDir+"="+dir)
		if provider == "pebble" {
			// The groups kept live between epochs are bounded by the
			// setting, 64 MiB by default (as much as the whole limit).
			cmd.Env = append(cmd.Env, memLimitEnvLive+"="+strconv.Itoa(16<<20))
		}
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		child, err := testutil.StartCmd(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := child.Wait(testutil.TreeProgress(dir), 0); err != nil {
			t.Fatalf("%s child: %v\n%s\n%s", provider, err, stdout.String(), child.Stderr.String())
		}
		out := stdout.Bytes()
		var res memLimitResult
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if line := sc.Bytes(); bytes.HasPrefix(line, []byte("{")) {
				if err := json.Unmarshal(line, &res); err != nil {
					t.Fatal(err)
				}
			}
		}
		if res.Error != "" {
			t.Fatalf("%s child: %s", provider, res.Error)
		}
		t.Logf("%s: %d epochs, %d rows, %d keys in state; peak Go heap %d MiB, peak RSS %d MiB (GOMEMLIMIT 64 MiB)",
			provider, res.Epochs, res.Rows, res.StateRows, res.PeakHeap>>20, res.PeakRSS>>20)
		return res
	}
	peb := run("pebble")
	if peb.StateRows != keys {
		t.Errorf("pebble: %d keys in state, want %d", peb.StateRows, keys)
	}
	if peb.PeakHeap > 2*limit {
		t.Errorf("pebble: peak heap %d MiB, far above the 64 MiB limit", peb.PeakHeap>>20)
	}
	mem := run("memory")
	if mem.StateRows != keys {
		t.Errorf("memory: %d keys in state, want %d", mem.StateRows, keys)
	}
	if mem.PeakHeap <= limit {
		t.Errorf("memory: peak heap %d MiB: the state does not outgrow the limit, the test proves nothing", mem.PeakHeap>>20)
	}
}

// countCheckSink checks every Update-mode row of the running count: in
// epoch e (rowsPerEpoch values from e*rowsPerEpoch, key = value % keys) each
// updated key has count e*rowsPerEpoch/keys + 1.
type countCheckSink struct {
	keys, perEpoch int64
	mu             sync.Mutex
	epochs         int
	rows           int64
	err            error
}

func (s *countCheckSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	want := epoch*s.perEpoch/s.keys + 1
	var n int64
	for {
		rec, err := data.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		counts := rec.Column(1).(*array.Int64)
		for i := 0; i < counts.Len(); i++ {
			if counts.Value(i) != want {
				s.fail(fmt.Errorf("epoch %d: key %v has count %d, want %d", epoch, rec.Column(0).(*array.Int64).Value(i), counts.Value(i), want))
			}
		}
		n += rec.NumRows()
		rec.Release()
	}
	if n != s.perEpoch {
		s.fail(fmt.Errorf("epoch %d: %d updated keys, want %d", epoch, n, s.perEpoch))
	}
	s.mu.Lock()
	s.epochs++
	s.rows += n
	s.mu.Unlock()
	return nil
}

func (s *countCheckSink) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// TestStateStoreMemoryLimitChild is the child of TestStateStoreMemoryLimit
// (it does nothing unless started by it).
func TestStateStoreMemoryLimitChild(t *testing.T) {
	provider := os.Getenv(memLimitEnvProvider)
	if provider == "" {
		t.Skip("child of TestStateStoreMemoryLimit")
	}
	res := memLimitChild(provider, os.Getenv(memLimitEnvKeys), os.Getenv(memLimitEnvDir))
	b, _ := json.Marshal(res)
	fmt.Printf("%s\n", b)
}

func memLimitChild(provider, keysText, dir string) (res memLimitResult) {
	keys, _ := strconv.ParseInt(keysText, 10, 64)
	perEpoch := keys / 6
	if n, err := strconv.ParseInt(os.Getenv(memLimitEnvPerEpoch), 10, 64); err == nil && n > 0 && keys%n == 0 {
		perEpoch = n
	}
	passes := int64(3) // every key counted three times
	if n, err := strconv.ParseInt(os.Getenv(memLimitEnvPasses), 10, 64); err == nil && n > 0 {
		passes = n
	}
	epochs := int(passes * keys / perEpoch)
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	defer func() {
		close(stop)
		res.PeakHeap = peak.Load()
		res.PeakRSS = peakRSS()
	}()
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "2"}})
	pebblestate.Register(s)
	src, err := rate.NewRateMicroBatchSource(mem, rate.RateMicroBatchOptions{RowsPerBatch: perEpoch, AdvanceMillisPerBatch: 1000})
	if err != nil {
		return memLimitResult{Error: err.Error()}
	}
	s.RegisterStream("rate", src)
	sink := &countCheckSink{keys: keys, perEpoch: perEpoch}
	w := s.SQLDataFrame(fmt.Sprintf("SELECT value %% %d AS k, count(*) AS n FROM STREAM rate GROUP BY value %% %d", keys, keys)).
		WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", dir).
		Option(ConfStateStoreProvider, provider).Option(ConfPebbleBlockCacheBytes, strconv.Itoa(8<<20))
	if v := os.Getenv(memLimitEnvLive); v != "" {
		w = w.Option(ConfPebbleLiveStateBytes, v)
	}
	q, err := w.Start(ctx)
	if err != nil {
		return memLimitResult{Error: err.Error()}
	}
	var last *StreamingQueryProgress
	for {
		sink.mu.Lock()
		done, serr := sink.epochs >= epochs, sink.err
		sink.mu.Unlock()
		if serr != nil {
			q.Stop()
			return memLimitResult{Error: serr.Error()}
		}
		if done {
			break
		}
		if !q.IsActive() {
			return memLimitResult{Error: fmt.Sprint(q.Exception())}
		}
		time.Sleep(10 * time.Millisecond)
	}
	q.Stop()
	for _, p := range q.RecentProgress() {
		if len(p.StateOperators) > 0 {
			last = p
		}
	}
	res = memLimitResult{Epochs: epochs, Rows: sink.rows}
	if last != nil && len(last.StateOperators) > 0 {
		res.StateRows = last.StateOperators[0].NumRowsTotal
		res.MemoryMetric = last.StateOperators[0].MemoryUsedBytes
		res.Metrics = last.StateOperators[0].CustomMetrics
	}
	return res
}

// peakRSS is the process's peak resident set (VmHWM), -1 when unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return -1
}
