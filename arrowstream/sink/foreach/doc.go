// Package foreach holds the sinks that hand a query's output to user code:
// a Writer per partition and epoch (Spark's foreach) and a function per
// epoch (Spark's foreachBatch). DataStreamWriter.Foreach and ForeachBatch
// use them.
package foreach
