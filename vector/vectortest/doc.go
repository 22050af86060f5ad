// Package vectortest is the test kit for Arrowstream's operators and
// expressions: it builds records from rows of Go values, reads records back
// as rows, compares results order-sensitively or as multisets, and runs
// operator and expression tests in many shapes (batch sizes 1, 3 and 1024,
// sliced inputs with non-zero offsets, garbage under null slots, validity
// bitmaps without nulls, zero-row batches without buffers interleaved with
// the data, early Close), always on a checked allocator that must end at
// zero bytes.
//
// It is imported by tests only, in this module and in packages built on
// vector.
package vectortest
