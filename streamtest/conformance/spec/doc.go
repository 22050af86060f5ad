// Package spec reads conformance scenario files: the JSON format that
// streamtest/testdata/conformance/FORMAT.md describes. It is the one
// loader of those files. The runner (package conformance) adds the
// engine-level validation and runs them; the sql and plan tests read the
// same files through it to parse and analyze every scenario's query.
//
// The package imports only the standard library, so that the tests of the
// lower layers (sql, plan) can use it without linking the engine.
// Decode checks the shape of a file (a JSON array of named scenarios,
// unique names, every step with an action); what the values mean (types,
// step fields, plan operations) is the runner's to check.
package spec
