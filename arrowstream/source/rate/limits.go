package rate

import (
	"fmt"
	"strconv"
)

// Admission control for the rate sources. Spark accepts any rowsPerSecond
// and produces a whole second of rows per epoch, so a huge rate makes an
// epoch that never ends; here option values are capped, and one epoch of
// the rate source covers only as many seconds as fit in a row bound (at
// least one second, so a lagging query catches up in bounded epochs).
const (
	// ConfMaxRowsPerSecond is the session setting that caps the
	// rowsPerSecond option of "rate" and the rowsPerBatch option of
	// "rate-micro-batch".
	ConfMaxRowsPerSecond = "arrowstream.rate.maxRowsPerSecond"
	// ConfMaxRowsPerTrigger is the session setting for the default
	// per-epoch row bound of the "rate" source (its maxRowsPerTrigger
	// option overrides it).
	ConfMaxRowsPerTrigger = "arrowstream.rate.maxRowsPerTrigger"

	// DefaultMaxRowsPerSecond is the cap when ConfMaxRowsPerSecond is unset.
	DefaultMaxRowsPerSecond int64 = 100_000_000
	// DefaultMaxRowsPerTrigger is the per-epoch bound when neither the
	// option nor ConfMaxRowsPerTrigger is set.
	DefaultMaxRowsPerTrigger int64 = 10_000_000
)

// Limits are the admission-control settings of a session.
type Limits struct {
	// MaxRowsPerSecond caps rowsPerSecond / rowsPerBatch (0: the default).
	MaxRowsPerSecond int64
	// MaxRowsPerTrigger is the default per-epoch bound of the rate source
	// (0: the default).
	MaxRowsPerTrigger int64
}

// LimitsFromConf reads ConfMaxRowsPerSecond and ConfMaxRowsPerTrigger with
// conf (a session's Conf lookup); unset keys take the defaults.
func LimitsFromConf(conf func(string) (string, bool)) (Limits, error) {
	l := Limits{MaxRowsPerSecond: DefaultMaxRowsPerSecond, MaxRowsPerTrigger: DefaultMaxRowsPerTrigger}
	for _, c := range []struct {
		key string
		dst *int64
	}{{ConfMaxRowsPerSecond, &l.MaxRowsPerSecond}, {ConfMaxRowsPerTrigger, &l.MaxRowsPerTrigger}} {
		v, ok := conf(c.key)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return l, fmt.Errorf("arrowstream: session setting %s=%q: must be a positive integer", c.key, v)
		}
		*c.dst = n
	}
	return l, nil
}

func (l Limits) maxRowsPerSecond() int64 {
	if l.MaxRowsPerSecond > 0 {
		return l.MaxRowsPerSecond
	}
	return DefaultMaxRowsPerSecond
}

func (l Limits) maxRowsPerTrigger() int64 {
	if l.MaxRowsPerTrigger > 0 {
		return l.MaxRowsPerTrigger
	}
	return DefaultMaxRowsPerTrigger
}

// checkCap refuses a per-second (or per-batch) row count over the cap,
// naming the option, the value and the setting that raises the cap.
func (l Limits) checkCap(source, option string, n int64) error {
	if limit := l.maxRowsPerSecond(); n > limit {
		return fmt.Errorf("arrowstream: %s option %s=%d exceeds the cap of %d rows (raise it with the session setting %s)", source, option, n, limit, ConfMaxRowsPerSecond)
	}
	return nil
}
