package plan

import (
	"fmt"
	"strings"
)

// settingRule says which values of a Spark setting the engine honours.
type settingRule struct {
	// only, when not empty, is the one value the engine implements (its
	// fixed behaviour, Spark's default); other values are refused.
	only string
	// also, when not empty, is a second value the engine implements.
	also string
	// why, when set, says why the other values are refused.
	why string
}

// settings are the Spark settings SET accepts. A setting is listed only
// when the engine honours it: the session-level ones its queries read, and
// the legacy switches whose default the engine implements.
var settings = map[string]settingRule{
	"spark.sql.ansi.enabled":                                     {},
	"spark.sql.ansi.strictindexoperator":                         {},
	"spark.sql.session.timezone":                                 {},
	"spark.sql.shuffle.partitions":                               {},
	"spark.sql.streaming.multiplewatermarkpolicy":                {},
	"spark.sql.streaming.nodatamicrobatches.enabled":             {},
	"spark.sql.streaming.minbatchestoretain":                     {},
	"spark.sql.streaming.statestore.providerclass":               {},
	"spark.sql.streaming.aggregation.stateformatversion":         {},
	"spark.sql.groupbyaliases":                                   {only: "true"},
	"spark.sql.crossjoin.enabled":                                {only: "true", why: whyCrossJoin},
	"spark.sql.groupbyordinal":                                   {},
	"spark.sql.orderbyordinal":                                   {},
	"spark.sql.legacy.allowparameterlesscount":                   {},
	"spark.sql.legacy.allowstarwithsingletableidentifierincount": {},
	"spark.sql.legacy.parser.havingwithoutgroupbyaswhere":        {},
	"spark.sql.parser.quotedregexcolumnnames":                    {},
	// EXCEPTION: an inner WITH redefining an outer CTE's name is refused
	// (checkNestedCTENames); elsewhere the inner definition wins.
	// CORRECTED: the inner definition wins everywhere. LEGACY: Spark 2's
	// substitution order (cte_legacy.go).
	"spark.sql.legacy.cteprecedencepolicy": {only: "EXCEPTION", also: "CORRECTED|LEGACY"},
	// Spark's own physical-planning switches: they choose how Spark
	// computes a query, never its answer, and the engine has its own
	// planner, so every value leaves the engine's answers as they are.
	"spark.sql.codegen.wholestage":                         {},
	"spark.sql.codegen.factorymode":                        {},
	"spark.sql.adaptive.enabled":                           {},
	"spark.sql.cbo.enabled":                                {},
	"spark.sql.autobroadcastjointhreshold":                 {},
	"spark.sql.join.prefersortmergejoin":                   {},
	"spark.sql.join.forceapplyshuffledhashjoin":            {},
	"spark.sql.subexpressionelimination.enabled":           {},
	"spark.sql.optimizenullawareantijoin":                  {},
	"spark.sql.optimizer.enablejsonexpressionoptimization": {},
	// Type and interval settings (settings_types.go says why).
	"spark.sql.timestamptype":              {only: "TIMESTAMP_LTZ", also: "TIMESTAMP_NTZ"},
	"spark.sql.legacy.interval.enabled":    {only: "false", why: whyLegacyInterval},
	"spark.sql.legacy.charvarcharasstring": {only: "false", why: whyCharVarcharAsString},
	"spark.sql.readsidecharpadding":        {},
	// Read when a stateful table starts in cluster mode (docs/cluster.md).
	"arrowstream.cluster.stateful.stablemembership": {only: "true"},
	// The cap of a cluster Kafka input's batch hold (docs/cluster.md).
	"arrowstream.cluster.batchhold": {},
}

// CheckSetting reports whether SET key = value can take effect: the
// engine refuses (ErrUnsupported) settings it does not implement rather
// than storing them and answering as if they were in force.
func CheckSetting(key, value string) error {
	r, ok := settings[strings.ToLower(key)]
	if !ok {
		return fmt.Errorf("SET %s: the setting is not supported by this engine: %w", key, ErrUnsupported)
	}
	for _, v := range strings.Split(r.also, "|") {
		if v != "" && strings.EqualFold(strings.TrimSpace(value), v) {
			return nil
		}
	}
	if r.only != "" && !strings.EqualFold(strings.TrimSpace(value), r.only) {
		if r.why != "" {
			return fmt.Errorf("SET %s=%s: only %s is supported: %s: %w", key, value, r.only, r.why, ErrUnsupported)
		}
		return fmt.Errorf("SET %s=%s: only %s is supported (the engine implements Spark's default): %w", key, value, r.only, ErrUnsupported)
	}
	return nil
}
