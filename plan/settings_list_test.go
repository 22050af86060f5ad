package plan

import (
	"sort"
	"strings"
	"testing"
)

// TestSettingsListed lists every setting SET accepts, so that accepting
// one more is a deliberate change: each must be honoured (its value read
// by the engine, or a value the engine's fixed behaviour implements, or a
// switch of Spark's own physical planner that never changes an answer).
// Everything else is refused with the setting's name.
func TestSettingsListed(t *testing.T) {
	want := []string{
		"arrowstream.cluster.batchhold",
		"arrowstream.cluster.stateful.stablemembership=true",
		"spark.sql.adaptive.enabled",
		"spark.sql.ansi.enabled",
		"spark.sql.ansi.strictindexoperator",
		"spark.sql.autobroadcastjointhreshold",
		"spark.sql.cbo.enabled",
		"spark.sql.codegen.factorymode",
		"spark.sql.codegen.wholestage",
		"spark.sql.crossjoin.enabled=true",
		"spark.sql.groupbyaliases=true",
		"spark.sql.groupbyordinal",
		"spark.sql.join.forceapplyshuffledhashjoin",
		"spark.sql.join.prefersortmergejoin",
		"spark.sql.legacy.allowparameterlesscount",
		"spark.sql.legacy.allowstarwithsingletableidentifierincount",
		"spark.sql.legacy.charvarcharasstring=false",
		"spark.sql.legacy.cteprecedencepolicy=EXCEPTION",
		"spark.sql.legacy.interval.enabled=false",
		"spark.sql.legacy.parser.havingwithoutgroupbyaswhere",
		"spark.sql.optimizenullawareantijoin",
		"spark.sql.optimizer.enablejsonexpressionoptimization",
		"spark.sql.orderbyordinal",
		"spark.sql.parser.quotedregexcolumnnames",
		"spark.sql.readsidecharpadding",
		"spark.sql.session.timezone",
		"spark.sql.shuffle.partitions",
		"spark.sql.streaming.aggregation.stateformatversion",
		"spark.sql.streaming.minbatchestoretain",
		"spark.sql.streaming.multiplewatermarkpolicy",
		"spark.sql.streaming.nodatamicrobatches.enabled",
		"spark.sql.streaming.statestore.providerclass",
		"spark.sql.subexpressionelimination.enabled",
		"spark.sql.timestamptype=TIMESTAMP_LTZ",
	}
	var got []string
	for k, r := range settings {
		if r.only != "" {
			k += "=" + r.only
		}
		got = append(got, k)
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("accepted settings changed:\n got %q\nwant %q", got, want)
	}
	for _, refused := range []string{
		"spark.sql.legacy.timeParserPolicy",
		"spark.sql.legacy.interval.enabled",
		"spark.sql.maxMetadataStringLength",
		"spark.sql.legacy.charVarcharAsString",
		"spark.sql.timestampType",
	} {
		err := CheckSetting(refused, "true")
		if err == nil || !strings.Contains(err.Error(), refused) {
			t.Errorf("SET %s = %v, want a refusal naming the setting", refused, err)
		}
	}
	if err := CheckSetting("spark.sql.legacy.ctePrecedencePolicy", "OUTER"); err == nil {
		t.Errorf("ctePrecedencePolicy=OUTER accepted; only EXCEPTION, CORRECTED and LEGACY are")
	}
	for _, v := range []string{"exception", "corrected", "legacy"} {
		if err := CheckSetting("spark.sql.legacy.ctePrecedencePolicy", v); err != nil {
			t.Errorf("ctePrecedencePolicy=%s: %v", v, err)
		}
	}
}

// TestTypeSettingsSayWhy: the type settings are accepted at Spark's
// defaults and refused otherwise with the reason.
func TestTypeSettingsSayWhy(t *testing.T) {
	for _, c := range []struct{ key, ok, bad, why string }{
		{"spark.sql.legacy.interval.enabled", "false", "true", "legacy CalendarInterval results"},
		{"spark.sql.legacy.charVarcharAsString", "false", "true", "CHAR(n) and VARCHAR(n) table columns are refused"},
	} {
		if err := CheckSetting(c.key, c.ok); err != nil {
			t.Errorf("SET %s=%s: %v", c.key, c.ok, err)
		}
		err := CheckSetting(c.key, c.bad)
		if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), c.key) {
			t.Errorf("SET %s=%s = %v, want a refusal saying %q", c.key, c.bad, err, c.why)
		}
	}
	// spark.sql.timestampType takes both of Spark's values
	// (timestamp_type.go); another is an error naming the key.
	for _, v := range []string{"TIMESTAMP_LTZ", "timestamp_ntz"} {
		if err := CheckSetting("spark.sql.timestampType", v); err != nil {
			t.Errorf("SET spark.sql.timestampType=%s: %v", v, err)
		}
		o, err := OptionsFromConf(DefaultOptions(), map[string]string{"spark.sql.timestampType": v})
		if err != nil || o.TimestampNTZ != strings.EqualFold(v, "TIMESTAMP_NTZ") {
			t.Errorf("OptionsFromConf(spark.sql.timestampType=%s) = %+v, %v", v, o, err)
		}
	}
	if err := CheckSetting("spark.sql.timestampType", "TIMESTAMP_XYZ"); err == nil {
		t.Errorf("SET spark.sql.timestampType=TIMESTAMP_XYZ accepted")
	}
	if _, err := OptionsFromConf(DefaultOptions(), map[string]string{"spark.sql.timestampType": "TIMESTAMP_XYZ"}); err == nil || !strings.Contains(err.Error(), "spark.sql.timestampType") {
		t.Errorf("OptionsFromConf(spark.sql.timestampType=TIMESTAMP_XYZ) = %v, want an error naming the key", err)
	}
	for _, v := range []string{"true", "false"} {
		if err := CheckSetting("spark.sql.readSideCharPadding", v); err != nil {
			t.Errorf("SET spark.sql.readSideCharPadding=%s: %v", v, err)
		}
	}
}
