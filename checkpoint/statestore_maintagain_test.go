package checkpoint

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMaintenanceRunsAgainForCommitsDuringIt: commits that come while a
// partition's maintenance runs (here: its snapshot's write is held) and
// make a new snapshot due get it when that maintenance ends, without
// waiting for another commit. Before, the run ended with "at the next
// commit", so a query whose last epochs all came during one maintenance
// stopped with its newest snapshot that many epochs behind (the
// lazy-directory test failed on a loaded machine because of it).
func TestMaintenanceRunsAgainForCommitsDuringIt(t *testing.T) {
	for _, perPartition := range []bool{false, true} {
		t.Run(fmt.Sprintf("perPartition=%v", perPartition), func(t *testing.T) {
			testMaintenanceRunsAgain(t, perPartition)
		})
	}
}

func testMaintenanceRunsAgain(t *testing.T, perPartition bool) {
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w := &Writer{NoSync: true, Hook: func(step WriteStep, path string) error {
		if step != BeforeTempWrite || !(strings.HasSuffix(path, packExt) || strings.HasSuffix(path, ".snapshot") || strings.HasSuffix(path, ".segment")) {
			return nil
		}
		first := false
		once.Do(func() { first = true })
		if first {
			close(started)
			<-release
		}
		return nil
	}}
	opts := StoreOptions{MinDeltasForSnapshot: 2, MaxDeltasForSnapshot: 3, PartitionSnapshotFiles: perPartition}
	q := openGroupQuery(t, t.TempDir(), w, 1, opts)
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	rewrite := func(v int64) {
		t.Helper()
		if err := q.run(v, map[int]change{0: {"a": fmt.Sprint("x", v), "b": fmt.Sprint("y", v)}}, true); err != nil {
			t.Fatal(err)
		}
	}
	v := int64(0)
	// Epochs until a snapshot's write starts (it is due after
	// MinDeltasForSnapshot+1 rewrites); it waits for release.
	for ; ; v++ {
		if v == 50 {
			t.Fatal("no snapshot write started in 50 epochs")
		}
		rewrite(v)
		select {
		case <-started:
		case <-time.After(20 * time.Millisecond):
			continue
		}
		v++
		break
	}
	first := v
	// Epochs while it is held: enough to make the next snapshot due.
	for ; v < first+5; v++ {
		rewrite(v)
	}
	close(release)
	q.waitAll(t)
	p := q.parts[0].(*StorePartition)
	p.mu.Lock()
	k, ok := newestBase(p.files, p.version)
	latest := p.version
	p.mu.Unlock()
	if !ok || k.version != latest {
		t.Fatalf("after maintenance ended, the newest snapshot is %v (found %v), want version %d: the commits made during it were left for a next commit", k, ok, latest)
	}
}
