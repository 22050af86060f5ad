// Package memory is the in-memory streaming source (Spark's
// MemoryStream) for tests, demos and clients that push rows: every
// AddData call appends one block and advances the offset by one. The
// arrowstream package exports it as MemoryStream.
package memory
