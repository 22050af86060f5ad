// Package stateful holds every stateful streaming operator: streaming
// aggregation (with windows and session windows), deduplication,
// stream-stream joins, the streaming limit, flatMapGroupsWithState and the
// event-time watermark operator, with their state partitions and row
// codecs. Planner.Plan turns a streaming plan node into its operator.
//
// An operator stages its state changes during Execute in the partitions
// the epoch's provider (Epoch.Stores) opens, and the engine decides their
// fate: Commit after the sink committed the epoch, Abort otherwise.
package stateful
