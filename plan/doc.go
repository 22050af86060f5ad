// Package plan turns SQL (package sql) and the Go DataFrame API into
// logical plans, analyzes them (names, types, implicit casts, aggregation
// rules, Spark's streaming rules), optimizes them and builds vector
// operators from them. It imports only vector, sql and Arrow.
//
// # Logical plans
//
// A [Node] is a logical operator: [Scan], [Values], [SubqueryAlias],
// [Project], [Filter], [Aggregate], [Join], [Union], [Limit], [Sort],
// [Deduplicate], [EventTimeWatermark], [WindowAssign], [SessionWindow],
// [Explode] and [FlatMapGroupsWithState]. Nodes are immutable; the
// optimizer builds new ones. [RewriteStreaming] adds the streaming-only
// nodes of the extensions beyond Spark: [DistinctMark] under a streaming
// aggregation with distinct aggregates, [StreamingTopN] for
// row_number() <= N over a stream. Expressions ([Expr]) are resolved and typed:
// a [ColumnRef] is an ordinal into the node's input (for a [Join], into
// the left columns followed by the right ones), and [AggregateExpr]s live
// only in an [Aggregate], whose output is its keys then its aggregates.
// current_timestamp() is the distinct kind [CurrentTimestamp]: the
// physical layer replaces it with [Env.BatchTimestamp], the epoch's batch
// time in a streaming query.
//
// # Building plans
//
// [Analyze], [AnalyzeQuery] and [AnalyzeSQL] resolve SQL against a
// [Catalog]. The builder functions [Read], [ReadStatic], [Select],
// [Where], [WithColumn], [ToDF], [WithWatermark], [GroupBy],
// [DropDuplicates], [JoinOn], [JoinUsing], [UnionAll], [WithLimit],
// [OrderBy], [FlatMapGroups] and [Alias] are the DataFrame operations of
// the conformance scenarios (streamtest/testdata/conformance/FORMAT.md);
// they take expressions as strings in the SQL dialect (docs/sql.md) and
// share the analyzer's code, so both front ends build the same plans.
// Errors are *[Error] values with the position of the bad text, wrapping a
// sentinel ([ErrUnresolved], [ErrAmbiguous], [ErrType], [ErrAggregate],
// [ErrUnsupported]); unknown names come with "did you mean" suggestions.
//
// Types follow Spark's ANSI coercion: vector widens numbers itself; the
// analyzer inserts the casts vector does not do (a string compared with
// or added to a number becomes bigint or double, with a date or timestamp
// that type; CASE, coalesce and UNION branches widen to a common type).
// Column names follow Spark's automatic names (count(1),
// CAST(window.start AS BIGINT)).
//
// # Watermarks and windows
//
// [EventTimeWatermark] marks its column's field metadata with
// [WatermarkDelayKey] (spark.watermarkDelayMs) and removes the key from
// the other columns. Bare column references (projections, aggregation
// keys, join outputs) and window columns carry the metadata on, as Spark's
// attributes do; stateful operators find the event time with
// [EventTimeColumns] and [WatermarkDelay]. window(...) in GROUP BY or in
// a select list becomes a [WindowAssign] below the block, producing a
// struct column named window ({start, end}); windowing a window column
// windows its window_time. session_window(...) becomes a [SessionWindow]
// whose sessions the streaming engine merges.
//
// # Streaming checks
//
// [CheckStreaming] applies Spark's UnsupportedOperationChecker rules for
// an output mode; a violation is a *[StreamingError] naming its rule.
// [CheckBatch] rejects streams in batch queries.
//
// # Optimizer
//
// [Optimize] folds constants, merges filters, pushes predicates down,
// infers filters through join keys ([InferFilters]) and prunes columns,
// without changing what a streaming query computes (see its
// documentation for what is pushed where). Columns derived from an
// event-time column by an order-keeping shift carry the watermark bound
// ([WatermarkShiftKey], [WatermarkBound]) for the stream-stream join's
// state eviction.
//
// # Physical plans
//
// [BuildOperator] builds the vector operator of one node over its
// children's operators; [AggregateSpecFor], [JoinSpecFor],
// [EquiJoinKeys] and [ToVectorExpr] expose the pieces. [BuildTree]
// composes them, taking scans' operators from a hook (the streaming
// engine passes each epoch's source data there and builds its stateful
// operators itself); [Execute] and [ExecuteSQL] run batch queries.
// [Explain], [PhysicalPlan] and [ExplainText] render plans for EXPLAIN.
//
// Operators follow vector's ownership rules: BuildOperator and BuildTree
// take ownership of the operators they are given only on success, and
// what they return is the caller's to pull and close.
package plan
