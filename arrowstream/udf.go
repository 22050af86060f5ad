package arrowstream

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
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

// userFunctionNames lists the session's user functions, sorted (SHOW USER
// FUNCTIONS; Spark lists a temporary function by its bare name).
func (s *Session) userFunctionNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.funcs))
	for n := range s.funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// describeUserFunction answers DESCRIBE FUNCTION [EXTENDED] for a user
// function of the session: ok is false when name is not one.
func (s *Session) describeUserFunction(name string, extended bool) (rows []string, ok bool) {
	f := sessionCatalog{s}.Function(strings.TrimSpace(name))
	if f == nil {
		return nil, false
	}
	key := strings.ToLower(f.Name)
	args := make([]string, len(f.Args))
	for i, t := range f.Args {
		args[i] = vector.TypeName(t)
	}
	rows = []string{
		"Function: " + key,
		"Kind: user function registered in this session",
		fmt.Sprintf("Usage: %s(%s) - returns %s.", key, strings.Join(args, ", "), vector.TypeName(f.Result)),
	}
	if extended {
		rows = append(rows, "Extended Usage:",
			fmt.Sprintf("    Arguments: %d", len(f.Args)),
			fmt.Sprintf("    Deterministic: %t", f.Deterministic))
	}
	return rows, true
}
