package pgwire

// PostgreSQL clients write casts with PostgreSQL's type names
// ('x'::text, $1::int8); the dialect has "::" casts with its own names.
// translate (pgdialect.go) rewrites the names it lacks. timestamptz is
// TIMESTAMP_LTZ, an instant under either spark.sql.timestampType.
var pgCastNames = map[string]string{
	"text": "STRING", "varchar": "STRING", "bpchar": "STRING", "name": "STRING",
	"int2": "SMALLINT", "int4": "INT", "int8": "BIGINT", "integer": "INT",
	"float4": "FLOAT", "float8": "DOUBLE", "real": "FLOAT",
	"bool": "BOOLEAN", "timestamptz": "TIMESTAMP_LTZ", "bytea": "BINARY",
	"numeric": "DECIMAL(38,18)", "json": "STRING", "jsonb": "STRING",
}
