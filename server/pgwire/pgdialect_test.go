package pgwire

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/arrowstream/arrowstream/sql"
)

// TestTranslate: PostgreSQL syntax becomes the dialect's; quoted text is
// never rewritten.
func TestTranslate(t *testing.T) {
	d := &dialect{user: "o'neil", version: "PostgreSQL 15.0"}
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1 AS "Name", "a""b"`, "SELECT 1 AS `Name`, `a\"b`"},
		{"SELECT \"x`y\"", "SELECT `x``y`"},
		{`SELECT E'a\nb'`, `SELECT 'a\nb'`},
		{`SELECT 'E''x'`, `SELECT 'E''x'`},
		{`WHERE a ~ '^x' AND b !~ 'y' AND c ~* 'z' AND d !~~ 'p%' AND e ~~* 'Q'`,
			`WHERE a  RLIKE  '^x' AND b  NOT RLIKE  'y' AND c  RLIKE '(?i)z' AND d  NOT LIKE  'p%' AND e  ILIKE  'Q'`},
		{`WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default AND x`,
			`WHERE c.relname  RLIKE '^(t)$'  AND x`},
		{`SELECT ~5, -(~x)`, `SELECT ~5, -(~x)`},
		{`SELECT pg_catalog.format_type(25, -1) IS NULL, pg_catalog.pg_class.relname FROM pg_catalog.pg_class`,
			"pg_catalog.pg_class.relname FROM pg_catalog.pg_class"},
		{`SELECT x::pg_catalog.text, y::int8, z::oid, w::regclass, v::"char", u::double precision`,
			`SELECT x::STRING, y::BIGINT, z::BIGINT, w::BIGINT, v::STRING, u::DOUBLE`},
		{`SELECT current_user, current_schema(), pg_catalog.version()`, `SELECT 'o\'neil', 'default', 'PostgreSQL 15.0'`},
		{`SELECT t.current_user FROM t`, `SELECT t.current_user FROM t`},
		{`SELECT pg_get_userbyid(c.relowner), pg_table_is_visible(c.oid)`, `SELECT 'arrowstream', ((c.oid) IS NOT NULL)`},
		{"SELECT '~ pg_catalog.version() \"x\"' -- ~ \"q\"\n/* \"r\" ~ */ 1", "SELECT '~ pg_catalog.version() \"x\"' -- ~ \"q\"\n/* \"r\" ~ */ 1"},
		{`SELECT (SELECT d.adbin FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid) FROM pg_attribute a`,
			`SELECT CAST(NULL AS STRING) FROM pg_attribute a`},
		{`SELECT (SELECT count(*) FROM pg_index) FROM t`, `SELECT (SELECT count(*) FROM pg_index) FROM t`},
		{`SELECT * FROM a JOIN (SELECT x FROM pg_index) k ON true`, `SELECT * FROM a JOIN (SELECT x FROM pg_index) k ON true`},
		{`SELECT EXISTS (SELECT 1 FROM pg_index)`, `SELECT EXISTS (SELECT 1 FROM pg_index)`},
	} {
		got := d.translate(tc.in)
		if !strings.Contains(got, tc.want) {
			t.Errorf("translate(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := d.translate(`SELECT 'types_t'::regclass`); got != "SELECT "+regclassOID("types_t") || regclassOID("types_t") != regclassOID(`default."types_t"`) {
		t.Errorf("regclass: %q", got)
	}
}

// TestReadsEmptyCatalog: queries that inner-join a relation without rows
// have none; outer joins, aggregates and other relations may.
func TestReadsEmptyCatalog(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT a, b FROM pg_catalog.pg_policy pol WHERE pol.polrelid = '1' ORDER BY 1":                            true,
		"SELECT x FROM pg_class c, pg_inherits i WHERE c.oid = i.inhparent":                                        true,
		"SELECT x FROM pg_attribute a JOIN (SELECT unnest(ix.indkey) attnum FROM pg_index ix) k ON a.x = k.y":      true,
		"SELECT p FROM pg_publication p UNION SELECT q FROM pg_publication_rel pr UNION ALL SELECT 1 FROM pg_enum": true,
		"SELECT x FROM pg_class c LEFT JOIN pg_description d ON d.objoid = c.oid":                                  false,
		"SELECT count(*) FROM pg_index":                             false,
		"SELECT x FROM pg_class":                                    false,
		"SELECT x FROM t JOIN pg_index i ON true":                   true,
		"SELECT x FROM other.pg_index":                              false,
		"SELECT p FROM pg_publication UNION SELECT 1 FROM pg_class": false,
		"SELECT x FROM pg_index RIGHT JOIN pg_class ON true":        false,
		"SELECT 1":                             false,
		"INSERT INTO t SELECT * FROM pg_index": false,
	} {
		if got := readsEmptyCatalog(q); got != want {
			t.Errorf("readsEmptyCatalog(%q) = %v, want %v", q, got, want)
		}
	}
}

// FuzzTranslate: translation of any text terminates without panicking,
// keeps valid UTF-8 valid, and leaves text without PostgreSQL syntax
// that the dialect parses as it was.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{`SELECT "a" FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^x$' COLLATE pg_catalog.default`,
		`SELECT format_type(a, b), quote_ident(x), (SELECT 1 FROM pg_attrdef), E'\'', 'x'::regclass`, `SELECT ~~~ !~* ( ((`,
		`SELECT 1 AS a, 'b' AS c FROM t WHERE x > 2`, `pg_catalog.`, `OPERATOR(`, `COLLATE`, `'a'::`, `SELECT (SELECT`} {
		f.Add(s)
	}
	d := &dialect{user: "u", version: "v"}
	f.Fuzz(func(t *testing.T, text string) {
		got := d.translate(text)
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("translate(%q) = %q: invalid UTF-8", text, got)
		}
		_ = readsEmptyCatalog(text)
		// Text of only the dialect's syntax (no double quotes, regex
		// operators, E strings, catalog names or casts) parses the same.
		if strings.ContainsAny(text, "\"~!:`eE") || strings.Contains(strings.ToLower(text), "pg_") || strings.Contains(strings.ToLower(text), "current_") ||
			strings.Contains(strings.ToLower(text), "version") || strings.Contains(strings.ToLower(text), "collate") || strings.Contains(strings.ToLower(text), "operator") {
			return
		}
		a, errA := sql.Parse(text)
		b, errB := sql.Parse(got)
		if (errA == nil) != (errB == nil) || errA == nil && sql.Format(a) != sql.Format(b) {
			t.Fatalf("translate(%q) = %q changed the statement: %v / %v", text, got, errA, errB)
		}
	})
}
