package arrowstream

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// TestRecordedTableConf: the settings that shape a table are recorded,
// the shuffle partitions in effect even when unset, and neither the
// state store's tuning nor unrelated settings.
func TestRecordedTableConf(t *testing.T) {
	got := recordedTableConf(map[string]string{
		"spark.sql.session.timeZone":                    "Asia/Kolkata",
		"spark.sql.ansi.enabled":                        "false",
		stream.ConfWatermarkPolicy:                      "max",
		stream.ConfStateStoreProvider:                   "pebble",
		stream.ConfPebbleBlockCacheBytes:                "1000",
		stream.ConfPebbleLocalDir:                       "/tmp/x",
		"arrowstream.cluster.stateful.stableMembership": "true",
		"spark.sql.caseSensitive":                       "false",
	})
	want := map[string]string{
		"spark.sql.session.timeZone":                    "Asia/Kolkata",
		"spark.sql.ansi.enabled":                        "false",
		stream.ConfWatermarkPolicy:                      "max",
		stream.ConfStateStoreProvider:                   "pebble",
		"arrowstream.cluster.stateful.stableMembership": "true",
		stream.ConfShufflePartitions:                    defaultShufflePartitions(),
	}
	if len(got) != len(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("recorded %v, want %v (key %s)", got, want, k)
		}
	}
	if got := recordedTableConf(map[string]string{stream.ConfShufflePartitions: "6"}); got[stream.ConfShufflePartitions] != "6" {
		t.Fatalf("recorded %v, want the set shuffle partitions", got)
	}
}
