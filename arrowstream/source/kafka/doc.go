// Package kafka is the Kafka source and sink (format "kafka"), modelled on
// Spark's Structured Streaming Kafka integration and built on franz-go.
//
// The source reads a set of topic partitions (subscribe, subscribePattern
// or assign) and exposes Spark's record schema: key, value, topic,
// partition, offset, timestamp, timestampType and, with includeHeaders,
// headers. Its offset is Spark's JSON map of the next offset to read per
// partition ({"topic":{"0":23,"1":7}}); Read(start, end] fetches exactly the
// records with start[p] <= offset < end[p] by offset, so an epoch replayed
// after a crash reads the same records for as long as Kafka retains them.
// The initial offsets (startingOffsets) are resolved once, when a query
// starts for the first time, and kept in the query's checkpoint.
//
// The sink writes each epoch's rows as Kafka records with an idempotent
// producer and flushes before AddBatch returns. Like Spark's it is
// at-least-once: an epoch replayed after a crash is written again.
//
// Install registers both with a Session. docs/connectors.md lists the
// options and what is not supported.
package kafka
