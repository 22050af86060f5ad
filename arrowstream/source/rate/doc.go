// Package rate holds the built-in "rate" and "rate-micro-batch" sources
// (Spark's formats of the same names): rows of (timestamp, value) at a
// fixed rate of processing time, or per micro-batch.
package rate
