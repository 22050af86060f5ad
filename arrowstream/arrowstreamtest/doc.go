// Package arrowstreamtest holds the engine's test hooks, kept out of the
// arrowstream API: ManualClock (a clock that moves only when told to, for
// SessionOptions.Clock) and the FaultInjector contract of
// SessionOptions.Faults.
package arrowstreamtest
