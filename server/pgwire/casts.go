package pgwire

import (
	"strings"
)

// PostgreSQL clients write casts with PostgreSQL's type names
// ('x'::text, $1::int8); the dialect has "::" casts with its own names.
// pgCasts rewrites the names it lacks, outside quotes and comments.
var pgCastNames = map[string]string{
	"text": "STRING", "varchar": "STRING", "bpchar": "STRING", "name": "STRING",
	"int2": "SMALLINT", "int4": "INT", "int8": "BIGINT", "integer": "INT",
	"float4": "FLOAT", "float8": "DOUBLE", "real": "FLOAT",
	"bool": "BOOLEAN", "timestamptz": "TIMESTAMP", "bytea": "BINARY",
	"numeric": "DECIMAL(38,18)", "json": "STRING", "jsonb": "STRING",
}

// pgCasts returns text with PostgreSQL cast type names replaced.
func pgCasts(text string) string {
	var b strings.Builder
	last := 0
	scan(text, func(ev scanEvent, s, e int) bool {
		if ev != evCast {
			return true
		}
		name := strings.TrimLeft(text[s+2:e], " \t")
		lower := strings.ToLower(name)
		repl, ok := pgCastNames[lower]
		if lower == "double" && strings.HasPrefix(strings.ToLower(strings.TrimLeft(text[e:], " ")), "precision") {
			rest := strings.TrimLeft(text[e:], " ")
			e = len(text) - len(rest) + len("precision")
			repl, ok = "DOUBLE", true
		}
		if !ok {
			return true
		}
		b.WriteString(text[last:s])
		b.WriteString("::")
		b.WriteString(repl)
		last = e
		return true
	})
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}
