package kafka_test

import (
	"context"
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
	"github.com/arrowstream/arrowstream/arrowstream/source/files"
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
	total, _ := strconv.ParseInt(totalText, 10, 64)
	seed, _ := strconv.ParseInt(seedText, 10, 64)
	r := rand.New(rand.NewSource(seed))
	countdown := -1
	if total == 0 && r.Intn(2) == 0 {
		countdown = r.Intn(8)
	}
	s := newFileSession(memory.NewGoAllocator())
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	r := rand.New(rand.NewSource(7))
	deadline := time.Now().Add(120 * time.Second)
	start := time.Now()
	cycle, selfKills := 0, 0
	// run starts a child; killAfter > 0 kills it then (a child that dies
	// of its own SIGKILL first counts as a self-kill); it reports whether
	// the child finished.
	run := func(total int, killAfter time.Duration) bool {
		cycle++
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), fileCrashEnvDir+"="+dir, crashEnvBrokers+"="+brokers(c),
			crashEnvTotal+"="+strconv.Itoa(total), crashEnvSeed+"="+strconv.Itoa(cycle))
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
			if errors.As(err, &ee) && killAfter > 0 {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
					selfKills++
					return false
				}
			}
			if err != nil {
				t.Fatalf("child failed: %v\n%s", err, stderr.String())
			}
			return true
		case <-time.After(timeout):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			if killAfter == 0 {
				t.Fatalf("final child did not finish in time\n%s", stderr.String())
			}
			return false
		}
	}
	for killed := 0; killed < kills; killed++ {
		if run(0, time.Duration(150+r.Intn(250))*time.Millisecond) {
			t.Fatal("child finished without a total")
		}
		produce(t, c, "events", 3, "r", produced, perKill)
		produced += perKill
	}
	progressed := latestBatch(t, filepath.Join(dir, "checkpoint", "commits"))
	if progressed < 5 {
		t.Fatalf("the killed runs committed only %d epochs", progressed)
	}
	if !run(produced, 0) {
		t.Fatal("final run did not finish")
	}
	checkExactlyOnce(t, readBackParquet(t, filepath.Join(dir, "out")), values("r", 0, produced))
	if selfKills == 0 {
		t.Fatal("no run killed itself between a manifest commit and the commit log")
	}
	t.Logf("%d kills (%d right after a manifest commit; epochs committed before the last restart: %d), %d records, %s: 0 lost, 0 duplicated",
		kills, selfKills, progressed+1, produced, time.Since(start).Round(time.Millisecond))
}
