package kafka_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// The SIGKILL test: kfake runs in the test process; a child process (this
// test binary, re-executed) runs Kafka → memory sink (persisted in the
// checkpoint) and is killed at random moments while more records are
// produced, then restarted, until one run reads everything. The durable
// sink must then hold every record exactly once.

const (
	crashEnvDir     = "ARROWSTREAM_KAFKA_CRASH_DIR"
	crashEnvBrokers = "ARROWSTREAM_KAFKA_CRASH_BROKERS"
	crashEnvTotal   = "ARROWSTREAM_KAFKA_CRASH_TOTAL"
	crashEnvSeed    = "ARROWSTREAM_KAFKA_CRASH_SEED"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnvDir); dir != "" {
		os.Exit(crashChild(dir, os.Getenv(crashEnvBrokers), os.Getenv(crashEnvTotal), os.Getenv(crashEnvSeed)))
	}
	os.Exit(m.Run())
}

// killingSink is the memory sink that, in some runs, kills its process
// right after an epoch reached the sink and before the commit log records
// it: the restarted query must re-run that epoch without duplicating it.
type killingSink struct {
	*memsink.Table
	countdown int // kill after this many more epochs; <0: never
}

func (k *killingSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	err := k.Table.AddBatch(ctx, epoch, data)
	if k.countdown == 0 {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	k.countdown--
	return err
}

// crashChild runs the query until the sink holds total rows, then writes
// the sink's values to result.json.
func crashChild(dir, brokers, totalText, seedText string) int {
	total, _ := strconv.ParseInt(totalText, 10, 64)
	seed, _ := strconv.ParseInt(seedText, 10, 64)
	r := rand.New(rand.NewSource(seed))
	countdown := -1
	if total == 0 && r.Intn(2) == 0 {
		countdown = r.Intn(8)
	}
	s := newTestSession(&testing.T{}, filepath.Join(dir, "checkpoints"))
	s.RegisterSinkFormat("killing-memory", func(ctx context.Context, mem memory.Allocator, info arrowstream.SinkInfo) (arrowstream.Sink, error) {
		t, err := memsink.Open(ctx, mem, info, memsink.Options{Persist: true})
		if err != nil {
			return nil, err
		}
		if _, err := s.sinks.Replace(info.QueryName, t); err != nil {
			return nil, err
		}
		return &killingSink{Table: t, countdown: countdown}, nil
	})
	if err := s.RegisterSource("ks", "kafka", nil, map[string]string{"kafka.bootstrap.servers": brokers, "subscribe": "events",
		"startingOffsets": "earliest", "maxOffsetsPerTrigger": "97"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	q, err := s.ReadStream("ks").Select("CAST(value AS STRING) AS v").
		WriteStream().Format("killing-memory").QueryName("out").OutputMode(arrowstream.Append).
		Trigger(arrowstream.ProcessingTime(2 * time.Millisecond)).Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for {
		if tbl, ok := s.sinks.Lookup("out"); ok {
			snap := tbl.Snapshot()
			n := snap.NumRows()
			snap.Release()
			if total > 0 && n >= total {
				break
			}
		}
		if !q.IsActive() {
			fmt.Fprintln(os.Stderr, q.Exception())
			return 3
		}
		time.Sleep(2 * time.Millisecond)
	}
	q.Stop()
	t := &testing.T{}
	b, _ := json.Marshal(s.stringColumn(t, "out", "v"))
	if err := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func TestKafkaSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess crash loop")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const kills, initial, perKill = 20, 2000, 150
	c := newCluster(t, 3, "events")
	produce(t, c, "events", 3, "r", 0, initial)
	produced := initial
	dir := t.TempDir()
	r := rand.New(rand.NewSource(42))
	deadline := time.Now().Add(120 * time.Second)
	start := time.Now()
	cycle, selfKills := 0, 0
	run := func(total int, killAfter time.Duration) (finished bool) {
		cycle++
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashEnvDir+"="+dir, crashEnvBrokers+"="+brokers(c), crashEnvTotal+"="+strconv.Itoa(total), crashEnvSeed+"="+strconv.Itoa(cycle))
		var stderr limitedBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		timeout := time.Until(deadline)
		if killAfter > 0 {
			timeout = killAfter
		}
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL && killAfter > 0 {
					selfKills++ // killed itself after a sink commit
					return false
				}
			}
			if err != nil {
				t.Fatalf("child failed: %v\n%s", err, stderr.String())
			}
			return true
		case <-time.After(timeout):
			cmd.Process.Signal(syscall.SIGKILL)
			err := <-done
			var ee *exec.ExitError
			if killAfter == 0 || !errors.As(err, &ee) {
				t.Fatalf("child did not finish in time (%v)\n%s", err, stderr.String())
			}
			return false
		}
	}
	killed := 0
	for killed < kills {
		// total 0: the child never finishes on its own.
		if run(0, time.Duration(150+r.Intn(250))*time.Millisecond) {
			t.Fatal("child finished without a total")
		}
		killed++
		produce(t, c, "events", 3, "r", produced, perKill)
		produced += perKill
	}
	// The killed runs must have made progress of their own: the final run
	// is then a restart in the middle of the stream.
	progressed := latestBatch(t, filepath.Join(dir, "checkpoints", "out", "commits"))
	if progressed < 5 {
		t.Fatalf("the killed runs committed only %d epochs", progressed)
	}
	if !run(produced, 0) {
		t.Fatal("final run did not finish")
	}
	var got []string
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, got, values("r", 0, produced))
	if selfKills == 0 {
		t.Fatal("no run killed itself between a sink commit and the commit log")
	}
	t.Logf("%d kills (%d of them right after a sink commit; epochs committed before the last restart: %d), %d records, %s: 0 lost, 0 duplicated",
		killed, selfKills, progressed+1, produced, time.Since(start).Round(time.Millisecond))
}

// latestBatch returns the highest batch id in a metadata log directory.
func latestBatch(t *testing.T, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	latest := int64(-1)
	for _, e := range ents {
		if n, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && n > latest {
			latest = n
		}
	}
	return latest
}

// limitedBuffer keeps the last 8 KiB a child wrote to stderr.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b = append(l.b, p...)
	if len(l.b) > 8<<10 {
		l.b = l.b[len(l.b)-8<<10:]
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
