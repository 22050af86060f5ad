// Package streamtest is a test kit for streaming queries in the spirit of
// Spark's StreamTest: a Stream fixture runs one query over in-memory
// sources into a memory-sink table, and a test drives it with a list of
// actions (AddData, CheckAnswer, StopStream, StartStream, AdvanceClock,
// ExpectFailure, ...) executed in order:
//
//	s := streamtest.NewT(t, streamtest.Options{
//		OutputMode: arrowstream.Update,
//		Query: func(sess *arrowstream.Session) *arrowstream.DataFrame {
//			return sess.ReadStream("input").GroupBy("value").Agg("count(*)")
//		},
//	})
//	in := s.MustAddSource("input", schema)
//	streamtest.Run(t, s,
//		streamtest.StartStream(arrowstream.ProcessingTime(0), false),
//		streamtest.AddData(in, streamtest.Row{3}),
//		streamtest.CheckLastBatch(streamtest.Row{3, 1}),
//		streamtest.StopStream(),
//		streamtest.StartStream(arrowstream.ProcessingTime(0), false),
//		streamtest.AddData(in, streamtest.Row{3}, streamtest.Row{2}),
//		streamtest.CheckLastBatch(streamtest.Row{3, 2}, streamtest.Row{2, 1}),
//	)
//
// The fixture keeps its checkpoint in one directory for its whole life, so
// StopStream/StartStream restart the query on the same checkpoint, and it
// reuses one memory-sink table across restarts (as Spark's harness reuses
// its MemorySink), so checks see every epoch committed by every run. One
// manual clock (starting at the Unix epoch) serves the runs started with a
// manual clock and keeps its time across restarts. An armed FailNextEpoch
// fails the next epoch with input through the engine's FaultInjector hook.
//
// Every wait is bounded (Options.StepTimeout, 30 s by default) and fails
// with a message naming what was awaited. When an action fails, the error
// carries a dump of the actions so far, the checkpoint's offset- and
// commit-log entries, the sink's epochs and the query's state.
//
// Checks compare rows as multisets unless ordered. Values compare by value:
// every integer and float kind as numbers (an int32 column matches an
// int64 expectation), a timestamp column against a time.Time or against a
// number of seconds since the Unix epoch, nested values element by element.
//
// A Stream is driven from one goroutine; it is not safe for concurrent use.
package streamtest
