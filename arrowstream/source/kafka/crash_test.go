package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	if dir := os.Getenv(fileCrashEnvDir); dir != "" {
		os.Exit(fileCrashChild(dir, os.Getenv(crashEnvBrokers), os.Getenv(crashEnvTotal), os.Getenv(crashEnvSeed)))
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
	total, countdown := childPlan(totalText, seedText)
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
	res := runCrashLoop(t, crashEnvDir, 42, filepath.Join("checkpoints", "out"))
	var got []string
	b, err := os.ReadFile(filepath.Join(res.dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, got, values("r", 0, res.produced))
	if res.selfKills == 0 {
		t.Fatal("no run killed itself between a sink commit and the commit log")
	}
	t.Logf("%d kills (%d of them right after a sink commit; epochs committed before the last restart: %d), %d records, %s: 0 lost, 0 duplicated",
		res.kills, res.selfKills, res.progressed+1, res.produced, time.Since(res.start).Round(time.Millisecond))
}
