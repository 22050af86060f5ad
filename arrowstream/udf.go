package arrowstream

import (
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/plan"
)

// RegisterFunction makes the user function f callable by name from the
// session's SQL (Spark's spark.udf.register): batch and streaming
// queries, views and CREATE TABLE AS SELECT. Registering a name again
// replaces the function for statements analyzed afterwards; a name of a
// built-in function, a missing type or a missing Eval is refused (see
// plan.ScalarFunction.Validate). A call with the wrong number of arguments
// fails its statement with [WRONG_NUM_ARGS.WITHOUT_SUGGESTION].
//
// Functions live in the session's memory: they are not written to a
// durable catalog (RestoreCatalog), so a session that restores views or
// queries calling one registers it before restoring.
func (s *Session) RegisterFunction(f *plan.ScalarFunction) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("arrowstream: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.funcs == nil {
		s.funcs = map[string]*plan.ScalarFunction{}
	}
	s.funcs[strings.ToLower(f.Name)] = f
	return nil
}

// DropFunction removes a user function; it reports whether there was one.
func (s *Session) DropFunction(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := strings.ToLower(name)
	_, ok := s.funcs[k]
	delete(s.funcs, k)
	return ok
}

// Function implements plan.FunctionCatalog.
func (c sessionCatalog) Function(name string) *plan.ScalarFunction {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.funcs[strings.ToLower(name)]
}
