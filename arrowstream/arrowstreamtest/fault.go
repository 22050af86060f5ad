package arrowstreamtest

// FaultInjector is a test hook that fails an epoch at a precise point of
// the micro-batch loop (the conformance scenarios' fail_next_epoch step;
// Spark's tests throw from a user function instead). Set it in
// arrowstream.SessionOptions.Faults; production code leaves it nil, and then the loop
// does not change at all.
//
// BeforeSink is called once per executed epoch (data and no-data epochs, a
// re-run epoch again) after the epoch's offset-log entry is written and its
// operators have consumed all of its input (stateful operators have staged,
// not committed, their changes), and before the sink receives the result,
// the state stores commit and the commit-log entry is written. query is the
// query's name, inputRows the epoch's input rows over all sources. A non-nil
// error fails the epoch: the staged state is discarded and the query
// terminates with the error (wrapped, naming the epoch), so that a restart
// re-runs the epoch from its offset-log entry. It is called from the query's
// goroutine; implementations used by several queries must be safe for
// concurrent use.
//
// With an injector set, the loop materializes each epoch's result before
// handing it to the sink, so that the input is fully read when BeforeSink
// runs.
type FaultInjector interface {
	BeforeSink(query string, epoch, inputRows int64) error
}
