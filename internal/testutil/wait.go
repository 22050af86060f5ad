package testutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The waits of the crash tests have no fixed wall-clock limit: a child on
// a machine at load average 15 may take minutes for what takes a second
// alone, and a test that fails then is noise. A wait instead watches a
// measure of progress (files written, epochs committed, log output) and
// gives up only when that measure has not moved for a stall period, which
// is generous and scaled by ARROWSTREAM_TEST_TIME_SCALE.

// DefaultStall is how long a child may show no progress at all before a
// wait gives up (before scaling).
const DefaultStall = 2 * time.Minute

// pollEvery is how often a wait samples progress.
const pollEvery = 10 * time.Millisecond

// TimeScaleEnv names the environment variable that multiplies every
// stall period (a float, default 1), for machines slower still.
const TimeScaleEnv = "ARROWSTREAM_TEST_TIME_SCALE"

// Scaled returns d multiplied by ARROWSTREAM_TEST_TIME_SCALE (ignored
// unless a positive number).
func Scaled(d time.Duration) time.Duration {
	f, err := strconv.ParseFloat(os.Getenv(TimeScaleEnv), 64)
	if err != nil || f <= 0 {
		return d
	}
	return time.Duration(float64(d) * f)
}

// ErrStalled is returned by the waits when progress stopped moving for
// the whole stall period.
var ErrStalled = errors.New("no progress")

// Progress reports a measure of progress that grows (or at least
// changes) while the watched work advances.
type Progress func() int64

// TreeProgress measures the files under root: their number plus their
// total size, so that any file written, grown or added counts. Missing
// directories count as zero.
func TreeProgress(root string) Progress {
	return func() int64 {
		var n int64
		filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			n++
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
			return nil
		})
		return n
	}
}

// CountProgress measures a directory (a metadata log such as commits/) by
// its number of entries whose name is a decimal number.
func CountProgress(dir string) Progress {
	return func() int64 {
		ents, _ := os.ReadDir(dir)
		var n int64
		for _, e := range ents {
			if _, err := strconv.ParseInt(e.Name(), 10, 64); err == nil {
				n++
			}
		}
		return n
	}
}

// Any combines measures: it changes when any of them does.
func Any(ps ...Progress) Progress {
	return func() int64 {
		var n int64
		for _, p := range ps {
			n += p()
		}
		return n
	}
}

// Written is the total number of bytes ever written to the buffer (not
// only those kept), a measure of a child's log output.
func (l *TailBuffer) Written() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Wait waits for the child to exit and returns the result of its Wait. It
// kills the child and returns an error wrapping ErrStalled when neither
// progress nor the child's stderr changed for stall (0: DefaultStall);
// both are scaled.
func (c *Child) Wait(progress Progress, stall time.Duration) error {
	_, err := c.WaitUntil(progress, nil, stall)
	return err
}

// WaitUntil waits until the child exits (exited true, with the result of
// its Wait) or done reports true (exited false, nil error; done receives
// how far progress has moved since the call). It kills the child and
// returns an error wrapping ErrStalled when neither progress nor the
// child's stderr changed for stall (0: DefaultStall), scaled.
func (c *Child) WaitUntil(progress Progress, done func(moved int64) bool, stall time.Duration) (exited bool, err error) {
	if stall <= 0 {
		stall = DefaultStall
	}
	stall = Scaled(stall)
	measure := func() int64 {
		n := c.Stderr.Written()
		if progress != nil {
			n += progress()
		}
		return n
	}
	var start int64
	if progress != nil {
		start = progress()
	}
	last, lastMove := measure(), time.Now()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-c.done:
			return true, err
		case <-tick.C:
		}
		if done != nil {
			var moved int64
			if progress != nil {
				moved = progress() - start
			}
			if done(moved) {
				return false, nil
			}
		}
		if m := measure(); m != last {
			last, lastMove = m, time.Now()
			continue
		}
		if since := time.Since(lastMove); since > stall {
			kerr := c.Kill()
			return true, fmt.Errorf("child showed %w for %v (killed: %v)", ErrStalled, since.Round(time.Second), kerr)
		}
	}
}
