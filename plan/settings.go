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
}

// settings are the Spark settings SET accepts. A setting is listed only
// when the engine honours it: the session-level ones its queries read, and
// the legacy switches whose default the engine implements.
var settings = map[string]settingRule{
	"spark.sql.ansi.enabled":                                     {},
	"spark.sql.session.timezone":                                 {},
	"spark.sql.shuffle.partitions":                               {},
	"spark.sql.streaming.multiplewatermarkpolicy":                {},
	"spark.sql.streaming.nodatamicrobatches.enabled":             {},
	"spark.sql.streaming.minbatchestoretain":                     {},
	"spark.sql.streaming.statestore.providerclass":               {},
	"spark.sql.streaming.aggregation.stateformatversion":         {},
	"spark.sql.groupbyaliases":                                   {only: "true"},
	"spark.sql.groupbyordinal":                                   {only: "true"},
	"spark.sql.orderbyordinal":                                   {only: "true"},
	"spark.sql.legacy.allowparameterlesscount":                   {only: "false"},
	"spark.sql.legacy.allowstarwithsingletableidentifierincount": {only: "false"},
	"spark.sql.legacy.parser.havingwithoutgroupbyaswhere":        {only: "false"},
	// Choices of physical strategy (code generation, join algorithm,
	// adaptive and cost-based planning, subexpression elimination): Spark
	// gives the same answers under every value, and this engine has one
	// strategy of its own, so every value is honoured.
	"spark.sql.codegen.wholestage":               {},
	"spark.sql.codegen.factorymode":              {},
	"spark.sql.optimizenullawareantijoin":        {},
	"spark.sql.autobroadcastjointhreshold":       {},
	"spark.sql.join.prefersortmergejoin":         {},
	"spark.sql.join.forceapplyshuffledhashjoin":  {},
	"spark.sql.subexpressionelimination.enabled": {},
	"spark.sql.adaptive.enabled":                 {},
	"spark.sql.cbo.enabled":                      {},
	// Read when a stateful table starts in cluster mode (docs/cluster.md).
	"arrowstream.cluster.stateful.stablemembership": {only: "true"},
}

// CheckSetting reports whether SET key = value can take effect: the
// engine refuses (ErrUnsupported) settings it does not implement rather
// than storing them and answering as if they were in force.
func CheckSetting(key, value string) error {
	r, ok := settings[strings.ToLower(key)]
	if !ok {
		return fmt.Errorf("SET %s: the setting is not supported by this engine: %w", key, ErrUnsupported)
	}
	if r.only != "" && !strings.EqualFold(strings.TrimSpace(value), r.only) {
		return fmt.Errorf("SET %s=%s: only %s is supported (the engine implements Spark's default): %w", key, value, r.only, ErrUnsupported)
	}
	return nil
}
