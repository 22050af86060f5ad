// Package engine runs streaming queries: the micro-batch loop with its
// exactly-once recovery rule (docs/semantics.md §2), the continuous loop,
// the incremental execution of a query's plan (stateless nodes through
// plan.BuildOperator, stateful ones through stateful.Planner), watermark
// tracking, progress reports, fault injection and source wake-ups.
//
// The engine opens the query's state store provider (Config through
// StateProviderFunc) and commits or aborts every stateful operator's
// staged state after the sink has or has not committed the epoch.
// arrowstream.StreamingQuery wraps Query.
package engine
