// Package plan turns SQL (package sql) and the Go DataFrame API into
// logical plans, analyzes them (names, types, implicit casts, aggregation
// rules, Spark's streaming rules), optimizes them and builds vector
// operators from them.
//
// # Logical plans
//
// A [Node] is a logical operator: [Scan], [Values], [SubqueryAlias],
// [Project], [Filter], [Aggregate], [Join], [Union], [Limit], [Sort],
// [Deduplicate], [EventTimeWatermark], [WindowAssign], [SessionWindow],
// [Explode] and [FlatMapGroupsWithState]. Expressions ([Expr]) are
// resolved and typed: a [ColumnRef] is an ordinal into the input schema.
// current_timestamp() is the distinct kind [CurrentTimestamp], which the
// physical layer replaces with the epoch's batch timestamp ([Env]).
//
// The builder functions ([Select], [Filter], [WithColumn], [GroupBy],
// [Join], ...) take expressions as strings in SQL.md's syntax and are what
// both the SQL analyzer and the DataFrame API use, so that the two build
// the same plans.
//
// # Watermarks
//
// [EventTimeWatermark] marks its event-time column's field metadata with
// [WatermarkDelayKey] (spark.watermarkDelayMs), and projections, joins,
// aggregation keys and window columns carry that metadata on, as Spark's
// attributes do; stateful operators find the event time by it.
package plan
