// Package conformance runs the conformance scenarios of
// streamtest/testdata/conformance/FORMAT.md: JSON files of scenarios transcribed from Apache
// Spark's streaming test suites, each a query (DataFrame operations and/or
// SQL), in-memory sources, static tables and a list of steps with Spark's
// expected answers.
//
// Decode and Load read and validate scenario files (a malformed file is an
// error naming the scenario and step, never a panic). A Runner runs every
// scenario on a streamtest.Stream fixture: once with its plan (through the
// DataFrame API) and once with its SQL (Session.SQLDataFrame) when it has
// both, once for scenarios that only call the memory sink. It prints one
// line per scenario, PASS name, FAIL name: [variant] step N (kind): first
// difference, or SKIP name: reason, and a summary line "N passed, M failed"
// with ", K skipped" when some were skipped. With CheckOutputTypes (the
// project's tests; `arrowstream conformance -types`), after every passing
// check the sink's columns must also match the scenario's `output` in
// number and type (rows compare values by number, so this is what tells
// a double from a bigint). A start the engine refuses meets a runtime
// expect_failure that follows it with only input and waits between:
// Spark runs some queries until their first batch fails where the
// engine refuses them at analysis.
//
// Scenarios the engine cannot run yet are skipped with the reason (a skip
// is not a pass): those naming a flatMapGroupsWithState function (a
// `function NAME:` line in the description, or a group-state plan op) that
// the runner does not implement (groupfuncs.go maps names to Go functions)
// and those whose analyzed plan is a stream-stream anti join. Anything else
// the engine refuses fails the scenario.
//
// Settings: every scenario runs with spark.sql.shuffle.partitions =
// DefaultShufflePartitions, then Runner.Conf, then the scenario's own
// options (shuffle_partitions, watermark_policy, spark.* keys), later ones
// winning. With RestartAfterChecks the query of a stateful scenario is
// stopped and restarted after every epoch (before the first add that
// follows a check), which must give the same answers; a scenario whose
// query has two or more watermarked inputs under the min policy may
// answer later after a restart (per-input watermarks are not persisted,
// docs/semantics.md §3.2), so when it differs it is reported as
// restart-dependent by spec (Status RestartDependent, counted apart in the
// summary) if it passes without restarts and the eventual answers agree:
// both runs, with checks only letting the query catch up and a final
// epoch that moves every input's watermark far ahead, end with the same
// sink content, or the restarted one with extra rows that the all-at-once
// answer also has. Otherwise it fails.
package conformance
