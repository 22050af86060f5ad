package chaos

import (
	"io/fs"
	"path/filepath"
	"time"
)

// stallWatch tells when a measure of progress has not moved for a period:
// the finish limits of the harness are progress-based, so that a run on a
// loaded machine that is slow but moving is never cut short, and only a
// run that stopped moving fails.
type stallWatch struct {
	measure func() int64
	period  time.Duration
	last    int64
	moved   time.Time
	checked time.Time
}

func newStallWatch(measure func() int64, period time.Duration) *stallWatch {
	now := time.Now()
	return &stallWatch{measure: measure, period: period, last: measure(), moved: now, checked: now}
}

// stalled samples the measure (at most once a second: it walks a
// directory tree) and reports whether it stayed the same for the period.
func (s *stallWatch) stalled() bool {
	now := time.Now()
	if now.Sub(s.checked) < time.Second {
		return false
	}
	s.checked = now
	if v := s.measure(); v != s.last {
		s.last, s.moved = v, now
		return false
	}
	return now.Sub(s.moved) >= s.period
}

// treeSize measures the files under root: their number plus their total
// size, so that any file written, grown or added counts as progress.
func treeSize(root string) func() int64 {
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
