package pgwire

import (
	"fmt"
	"sort"
	"strings"

	"github.com/arrowstream/arrowstream/server"
)

// defaultSchemaName is current_schema(): where user tables are.
const defaultSchemaName = server.DefaultSchema

// pgFuncs are PostgreSQL's functions that catalog queries call, as
// expressions of the dialect over their (translated) arguments. A
// function returns false for an argument count it does not take, and
// the call is then left to the planner (which reports it).
var pgFuncs = map[string]func(d *dialect, args []string) (string, bool){
	"version":          constFunc(0, func(d *dialect) string { return stringLiteral(d.version) }),
	"current_schema":   constFunc(0, func(*dialect) string { return stringLiteral(defaultSchemaName) }),
	"current_database": constFunc(0, func(*dialect) string { return stringLiteral(databaseName) }),
	"current_user":     constFunc(0, func(d *dialect) string { return stringLiteral(d.user) }),
	"session_user":     constFunc(0, func(d *dialect) string { return stringLiteral(d.user) }),
	// current_schemas(include_implicit) is an array in PostgreSQL; its
	// text form here.
	"current_schemas":     constFunc(1, func(*dialect) string { return stringLiteral("{" + defaultSchemaName + "}") }),
	"pg_backend_pid":      constFunc(0, func(*dialect) string { return "0" }),
	"pg_is_in_recovery":   constFunc(0, func(*dialect) string { return "false" }),
	"pg_get_userbyid":     constFunc(1, func(*dialect) string { return stringLiteral(databaseName) }),
	"pg_encoding_to_char": argFunc(1, "CASE WHEN (%[1]s) = 6 THEN 'UTF8' ELSE '' END"),
	// Every relation the catalog shows is visible and readable: the
	// catalog shows only what the user may read.
	"pg_table_is_visible":      argFunc(1, "((%[1]s) IS NOT NULL)"),
	"pg_type_is_visible":       argFunc(1, "((%[1]s) IS NOT NULL)"),
	"pg_function_is_visible":   argFunc(1, "((%[1]s) IS NOT NULL)"),
	"has_table_privilege":      anyArgs(1, 3, "true"),
	"has_schema_privilege":     anyArgs(1, 3, "true"),
	"has_database_privilege":   anyArgs(1, 3, "true"),
	"has_column_privilege":     anyArgs(2, 4, "true"),
	"has_any_column_privilege": anyArgs(1, 3, "true"),
	// Nothing has a comment, a default, a constraint or an index.
	"obj_description":            anyArgs(1, 2, "CAST(NULL AS STRING)"),
	"col_description":            anyArgs(2, 2, "CAST(NULL AS STRING)"),
	"shobj_description":          anyArgs(2, 2, "CAST(NULL AS STRING)"),
	"pg_get_expr":                anyArgs(2, 3, "CAST(NULL AS STRING)"),
	"pg_get_constraintdef":       anyArgs(1, 2, "CAST(NULL AS STRING)"),
	"pg_get_indexdef":            anyArgs(1, 3, "CAST(NULL AS STRING)"),
	"pg_get_viewdef":             anyArgs(1, 2, "CAST(NULL AS STRING)"),
	"pg_get_triggerdef":          anyArgs(1, 2, "CAST(NULL AS STRING)"),
	"pg_get_partkeydef":          anyArgs(1, 1, "CAST(NULL AS STRING)"),
	"pg_relation_is_publishable": anyArgs(1, 1, "false"),
	// Arrays of the catalog (ACLs, options) are NULL text here.
	"array_to_string": func(_ *dialect, a []string) (string, bool) {
		if len(a) < 2 || len(a) > 3 {
			return "", false
		}
		return fmt.Sprintf("CAST((%s) AS STRING)", a[0]), true
	},
	"quote_ident": argFunc(1, "CASE WHEN (%[1]s) RLIKE '^[a-z_][a-z0-9_$]*$' THEN (%[1]s) "+
		"ELSE concat('\"', replace((%[1]s), '\"', '\"\"'), '\"') END"),
	"format_type": func(_ *dialect, a []string) (string, bool) {
		if len(a) != 2 {
			return "", false
		}
		return formatTypeExpr(a[0], a[1]), true
	},
}

func constFunc(n int, f func(d *dialect) string) func(*dialect, []string) (string, bool) {
	return func(d *dialect, a []string) (string, bool) {
		if len(a) != n {
			return "", false
		}
		return f(d), true
	}
}

// argFunc substitutes the arguments into format (%[1]s, ...).
func argFunc(n int, format string) func(*dialect, []string) (string, bool) {
	return func(_ *dialect, a []string) (string, bool) {
		if len(a) != n {
			return "", false
		}
		vals := make([]any, n)
		for i, s := range a {
			vals[i] = s
		}
		return fmt.Sprintf(format, vals...), true
	}
}

// anyArgs is a constant of a call with lo to hi arguments.
func anyArgs(lo, hi int, value string) func(*dialect, []string) (string, bool) {
	return func(_ *dialect, a []string) (string, bool) {
		return value, len(a) >= lo && len(a) <= hi
	}
}

// formatTypeExpr is format_type(oid, typmod): the type's SQL name, with
// numeric's precision and scale when the modifier has them.
func formatTypeExpr(oid, typmod string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CASE WHEN (%[1]s) = %[3]d AND (%[2]s) >= 4 THEN concat('numeric(', CAST(((%[2]s) - 4) div 65536 AS STRING), ',', CAST(((%[2]s) - 4) %% 65536 AS STRING), ')')", oid, typmod, oidNumeric)
	b.WriteString(" ELSE CASE (" + oid + ")")
	names := map[uint32]string{}
	for _, t := range pgTypeRows {
		names[t.oid] = t.name
	}
	for o, t := range scalarTypes {
		names[o] = t.name
	}
	names[18], names[19], names[26], names[oidVarchar], names[oidUnknown], names[2205] = `"char"`, "name", "oid", "character varying", "unknown", "regclass"
	for elem, arr := range arrayOf {
		names[arr] = names[elem] + "[]"
	}
	oids := make([]uint32, 0, len(names))
	for o := range names {
		oids = append(oids, o)
	}
	sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
	for _, o := range oids {
		fmt.Fprintf(&b, " WHEN %d THEN %s", o, stringLiteral(names[o]))
	}
	b.WriteString(" ELSE '???' END END")
	return b.String()
}
