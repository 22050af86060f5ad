package arrowstream

import (
	"fmt"

	"github.com/arrowstream/arrowstream/plan"
)

// truncate runs TRUNCATE TABLE name: the rows of a static table of the
// session go, the table stays (as INSERT OVERWRITE with no rows). Tables
// whose rows cannot be taken back (streams, the tables of a durable
// catalog) and views refuse it.
func (s *Session) truncate(name string) error {
	t, err := s.Catalog().Table(name)
	if err != nil {
		return fmt.Errorf("arrowstream: TRUNCATE TABLE: %w", err)
	}
	o, ok := t.(plan.Overwriter)
	if !ok {
		return fmt.Errorf("arrowstream: TRUNCATE TABLE %s: only the static tables of a session without a durable catalog can be truncated (not views, streams or durable tables): %w", backquoteName(name), plan.ErrUnsupported)
	}
	if err := o.Overwrite(); err != nil {
		return fmt.Errorf("arrowstream: TRUNCATE TABLE %s: %w", backquoteName(name), err)
	}
	return nil
}
