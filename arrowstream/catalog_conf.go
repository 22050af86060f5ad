package arrowstream

import (
	"context"
	"maps"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
)

// The durable catalog records, with a streaming table's definition, the
// session settings it was created under that shape its plan and
// semantics, and a restart of the table (RestoreCatalog, or the same
// CREATE run again while the table is stopped) plans it under them. A
// process restarted without the script's SETs (serve restoring its
// catalog, a cluster instance coming back without --init) otherwise
// planned another query: another number of state and repartition
// partitions, another time zone, or a refusal the SET had answered.
// Spark keeps such settings in the checkpoint's offset log for the same
// reason; the engine here does too for the settings it reads at run time
// (its offset log), but planning happens before the engine runs.

// tableConfKeys and tableConfPrefixes name the recorded settings.
var (
	tableConfKeys = []string{
		stream.ConfShufflePartitions,
		plan.ConfTimeZone,
		"spark.sql.ansi.enabled",
	}
	// stateStore.* shapes the state (provider, partitioning), except the
	// tuning a restart may change (stream.StateTuningKeys).
	tableConfPrefixes = []string{"spark.sql.streaming.", "arrowstream.cluster.", "stateStore."}
)

// recordedTableConf is the part of conf recorded with a streaming table:
// the settings above that are set, and the number of shuffle partitions
// in effect even when it is not (its default is the machine's CPU count,
// which another machine or a restart under another GOMAXPROCS changes).
func recordedTableConf(conf map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if isTableConf(k) {
			out[k] = v
		}
	}
	if _, ok := out[stream.ConfShufflePartitions]; !ok {
		out[stream.ConfShufflePartitions] = defaultShufflePartitions()
	}
	return out
}

func isTableConf(key string) bool {
	for _, k := range stream.StateTuningKeys() {
		if strings.EqualFold(key, k) {
			return false
		}
	}
	for _, k := range tableConfKeys {
		if strings.EqualFold(key, k) {
			return true
		}
	}
	for _, p := range tableConfPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// tableConfKey carries, in a statement's context, the settings of the
// recorded streaming table it restarts.
type tableConfKey struct{}

// withTableConf runs f with conf winning over the session's settings for
// what f plans and starts under its context (nil: as they are). The
// settings travel in the context, not in the session, so that statements
// running meanwhile keep the session's.
func (s *Session) withTableConf(ctx context.Context, conf map[string]string, f func(context.Context) (*Result, error)) (*Result, error) {
	if len(conf) == 0 {
		return f(ctx)
	}
	for k, v := range conf {
		if cur, ok := s.Conf(k); ok && cur != v {
			s.logger.Info("a restarted streaming table keeps the setting it was created with", "setting", k, "recorded", v, "session", cur)
		}
	}
	return f(context.WithValue(ctx, tableConfKey{}, maps.Clone(conf)))
}

// confFor is the session's settings with those of the recorded table
// ctx restarts, if any, winning.
func (s *Session) confFor(ctx context.Context) map[string]string {
	c := s.confCopy()
	if tc, ok := ctx.Value(tableConfKey{}).(map[string]string); ok {
		for k, v := range tc {
			c[k] = v
		}
	}
	return c
}
