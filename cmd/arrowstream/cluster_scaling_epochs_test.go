package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// scalingEpochLogEnv, when set, makes TestClusterScaling log every epoch
// each stage ran during a measurement, per instance: when it started
// (ms after the first record was produced), its input rows and its
// duration. It shows what the epoch counts alone do not: which epochs
// were small, and whether the stages of the instances kept in step.
const scalingEpochLogEnv = "ARROWSTREAM_CLUSTER_SCALING_EPOCH_LOG"

// logStageEpochs logs the epochs after before (stageEpochs) that started
// after start.
func logStageEpochs(t *testing.T, insts []*clusterInstance, before map[string][]int64, start time.Time, label string) {
	t.Helper()
	if os.Getenv(scalingEpochLogEnv) == "" {
		return
	}
	for i, ci := range insts {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		recs, err := readSQL(ctx, ci.addr, "SELECT name, batch_id, timestamp, num_input_rows, batch_duration_ms FROM system.query_progress WHERE name IS NOT NULL ORDER BY name, batch_id")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		lines := map[string][]string{}
		var names []string
		for _, r := range recs {
			name, id := r.Column(0).(*array.String), r.Column(1).(*array.Int64)
			ts, rows, dur := r.Column(2).(*array.Timestamp), r.Column(3).(*array.Int64), r.Column(4).(*array.Int64)
			for j := 0; j < int(r.NumRows()); j++ {
				n := name.Value(j)
				if b := before[n]; b != nil && id.Value(j) <= b[i] {
					continue
				}
				at := time.UnixMicro(int64(ts.Value(j))).Sub(start).Milliseconds()
				if lines[n] == nil {
					names = append(names, n)
				}
				lines[n] = append(lines[n], fmt.Sprintf("%d@%dms:%d/%dms", id.Value(j), at, rows.Value(j), dur.Value(j)))
			}
		}
		releaseRecords(recs)
		for _, n := range names {
			t.Logf("%s instance %d, %s: %s", label, i, n, strings.Join(lines[n], " "))
		}
	}
}

// contextSwitches is the voluntary and involuntary context switches of
// the instances' live threads (/proc/<pid>/task/*/status; threads that
// exited are not counted). Each is a thread put to sleep or woken, what
// the kernel's finish_task_switch counts against the process.
func contextSwitches(insts []*clusterInstance) (voluntary, involuntary int64) {
	for _, ci := range insts {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", ci.p.cmd.Process.Pid))
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				switch k {
				case "voluntary_ctxt_switches":
					voluntary += n
				case "nonvoluntary_ctxt_switches":
					involuntary += n
				}
			}
		}
	}
	return voluntary, involuntary
}
