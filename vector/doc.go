// Package vector is Arrowstream's columnar execution core: typed kernels,
// expressions and pull-based batch operators that turn Arrow record batches
// into Arrow record batches. It knows nothing of streaming, state or I/O; the
// streaming engine composes these operators per epoch.
//
// # Expressions
//
// An [Expr] is an unbound expression tree. [Expr.Bind] resolves column names
// against an input schema, checks argument types and picks the typed kernel
// once; the resulting [Evaluator] then runs that kernel over whole columns for
// every batch. Literals bind to constant operands ([ConstantEvaluator]):
// kernels take them as Go values and never expand them into columns.
//
// # Operators
//
// An [Operator] is pulled with Next until it returns (nil, io.EOF). Operators
// are bounded by the input they are given (one epoch's data), so pulling gives
// natural back-pressure.
//
// # Arrow ownership rules
//
// Every package of Arrowstream follows these rules.
//
//  1. Returning transfers. Operator.Next, Evaluator.Eval and any function that
//     returns an arrow.Record or arrow.Array hand the caller one reference,
//     which the caller must Release.
//  2. Parameters are borrowed. A callee that keeps an argument beyond the call
//     Retains it first and later Releases only what it Retained. A callee never
//     Releases an argument it did not Retain.
//  3. A channel send transfers ownership. On cancellation the receiver drains
//     the channel and releases what is left.
//  4. Kernels work on raw slices and bitmaps (Int64Values, the validity
//     bitmap); they never Retain or Release inside per-row loops.
//  5. Allocators are passed in explicitly (Bind and the operator constructors
//     take a memory.Allocator). Tests use the checked, poisoning allocator of
//     internal/testutil/poisonmem (vectortest.NewAllocator), which asserts
//     that zero bytes remain allocated at the end and overwrites released
//     memory, so that a read after release gives a wrong answer in the test.
//  6. Published (committed) data is immutable: nobody writes into a buffer that
//     another reader may hold. Readers retain what they send; eviction
//     releases.
//  7. Values own their bytes. A Go string or []byte taken from an array's
//     buffer (String.Value, BinaryParts) aliases it; anything kept beyond the
//     array's lifetime (a literal, a folded constant, a state key, a min/max
//     accumulator, a table cell) is copied first. [ValueAt] always copies.
//     The pool allocator zeroes and reuses released buffers, so an alias
//     kept too long silently changes.
//
// # Errors
//
// Bind errors ([BindError]) name the expression and the available columns.
// Runtime errors ([EvalError]) name the expression, the row and its input
// values; integer overflow and division by zero follow Spark 4's ANSI mode
// (an error), while invalid casts of strings yield null as Spark does without
// ANSI. No input makes this package panic.
package vector
