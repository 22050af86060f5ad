package arrowstream

import "github.com/arrowstream/arrowstream/plan"

// AnalysisOptions are the plan options the session's settings give the SQL
// statements it runs (ANSI mode, time zone, the legacy switches), for a
// caller that analyzes a statement itself the way the session would.
func (s *Session) AnalysisOptions() (plan.Options, error) {
	return plan.OptionsFromConf(plan.DefaultOptions(), s.confCopy())
}
