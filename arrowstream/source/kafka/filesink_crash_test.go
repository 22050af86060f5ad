package kafka_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// The Kafka → Parquet SIGKILL test: as TestKafkaSIGKILL, kfake runs in the
// test process and the child (this test binary, re-executed) runs the
// query, killed by the parent at random moments or by itself right after
// the file sink committed an epoch's manifest entry and before the commit
// log recorded it. The output, read back through the manifest, must hold
// every record exactly once.

const fileCrashEnvDir = "ARROWSTREAM_KAFKA_FILE_CRASH_DIR"

// killingFileSink is the Parquet sink that, in some runs, kills its
// process once an epoch is in the manifest but not yet in the commit log.
type killingFileSink struct {
	*files.Sink
	countdown int // kill after this many more epochs; <0: never
}

func (k *killingFileSink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	err := k.Sink.AddBatch(ctx, epoch, data)
	if k.countdown == 0 && err == nil {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	k.countdown--
	return err
}

// fileCrashChild runs Kafka → Parquet; with total > 0 it processes
// everything available and stops, otherwise it runs until killed.
func fileCrashChild(dir, brokerList, totalText, seedText string) int {
	total, countdown := childPlan(totalText, seedText)
	s := newFileSession(poisonmem.New())
	s.RegisterSinkFormat("parquet", func(ctx context.Context, mem memory.Allocator, info arrowstream.SinkInfo) (arrowstream.Sink, error) {
		o, err := files.ParseSinkOptions(files.Parquet, info.Options)
		if err != nil {
			return nil, err
		}
		o.NoSync = true // a SIGKILL keeps the page cache
		sink, err := files.NewSink(mem, info.Schema, info.Mode, o)
		if err != nil {
			return nil, err
		}
		return &killingFileSink{Sink: sink, countdown: countdown}, nil
	})
	q, err := startKafkaToParquet(s, brokerList, filepath.Join(dir, "out"), filepath.Join(dir, "checkpoint"),
		arrowstream.ProcessingTime(2*time.Millisecond))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if total == 0 {
		err = q.AwaitTermination(context.Background()) // until killed
		fmt.Fprintln(os.Stderr, "query ended:", err)
		return 3
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(10*time.Minute))
	defer cancel()
	if err := q.ProcessAllAvailable(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := q.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

func TestKafkaToFileSinkSIGKILL(t *testing.T) {
	res := runCrashLoop(t, fileCrashEnvDir, 7, "checkpoint")
	checkExactlyOnce(t, readBackParquet(t, filepath.Join(res.dir, "out")), values("r", 0, res.produced))
	if res.selfKills == 0 {
		t.Fatal("no run killed itself between a manifest commit and the commit log")
	}
	t.Logf("%d kills (%d right after a manifest commit; epochs committed before the last restart: %d), %d records, %s: 0 lost, 0 duplicated",
		res.kills, res.selfKills, res.progressed+1, res.produced, time.Since(res.start).Round(time.Millisecond))
}
