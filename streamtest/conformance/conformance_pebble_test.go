package conformance_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/streamtest/conformance"
)

var pebbleConf = map[string]string{arrowstream.ConfStateStoreProvider: "pebble"}

// TestConformancePebble runs every scenario with the Pebble state store
// (arrowstream conformance --conf stateStore.provider=pebble): the same
// results as with the memory provider.
func TestConformancePebble(t *testing.T) {
	t.Parallel() // the scenarios mostly wait (Pebble syncs, epochs): the runs overlap
	sum := runAllWith(t, false, pebbleConf, t.TempDir())
	checkResults(t, sum, false)
	if sum.Passed < 30 {
		t.Errorf("only %d scenarios passed", sum.Passed)
	}
}

// TestConformancePebbleRestartEquivalence adds a restart after every epoch.
func TestConformancePebbleRestartEquivalence(t *testing.T) {
	t.Parallel() // the scenarios mostly wait (Pebble syncs, epochs): the runs overlap
	if testing.Short() {
		t.Skip("runs every scenario again")
	}
	checkResults(t, runAllWith(t, true, pebbleConf, t.TempDir()), true)
}

// TestConformancePebbleNoWorkingSet runs every scenario with Pebble and
// stateStore.pebble.liveStateBytes = 0, restarting after every epoch:
// aggregations and deduplications keep nothing live between epochs and
// read every group they touch or evict back from the store.
func TestConformancePebbleNoWorkingSet(t *testing.T) {
	t.Parallel() // the scenarios mostly wait (Pebble syncs, epochs): the runs overlap
	conf := map[string]string{arrowstream.ConfStateStoreProvider: "pebble", arrowstream.ConfPebbleLiveStateBytes: "0"}
	sum := runAllWith(t, false, conf, t.TempDir())
	checkResults(t, sum, false)
	if testing.Short() {
		return
	}
	checkResults(t, runAllWith(t, true, conf, t.TempDir()), true)
}

// TestConformanceConfReachesStateStore shows that the runner's conf selects
// the provider: an unknown one fails a stateful scenario naming it.
func TestConformanceConfReachesStateStore(t *testing.T) {
	scenarios, err := conformance.Load(testdata + "/running_count.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &conformance.Runner{Out: &out, Conf: map[string]string{arrowstream.ConfStateStoreProvider: "nosuch"},
		Run: regexp.MustCompile("."), TempDir: t.TempDir()}
	sum := r.RunAll(scenarios)
	if sum.Failed == 0 || !strings.Contains(out.String(), "unknown state store provider") {
		t.Fatalf("an unknown provider did not fail the stateful scenarios:\n%s", out.String())
	}
}
