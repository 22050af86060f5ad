// Package sql is the lexer, parser and syntax tree of Arrowstream's SQL
// dialect: a subset of Spark SQL with the streaming extensions of
// Databricks SQL (STREAM, the WATERMARK clause, CREATE STREAMING TABLE).
// docs/sql.md defines the dialect. The package knows
// nothing of Arrow or of execution; the plan package resolves names and
// types against the tree.
//
// # Parsing
//
// [Parse] parses one statement, [ParseScript] a ';'-separated script, and
// [ParseExpr], [ParseSelectItem], [ParseOrderItem] and [ParseType] the
// fragments that the Go DataFrame API takes as strings. The parser is a
// hand-written recursive descent over a token slice; it never panics on
// any input, and nesting deeper than [MaxDepth] is an error rather than a
// stack overflow.
//
// Keywords and identifiers are case-insensitive; names keep the spelling
// of the source. Reserved words (the clause, join and operator keywords of
// Spark's ANSI list, such as SELECT, FROM, JOIN, ON, AND, CASE, NULL) need
// backquotes to be used as names, except after AS and '.', where no
// keyword could stand (window.end). All other keywords (first, window,
// count, stream, watermark, version, time, ...) are keywords only where
// the grammar expects one and names everywhere else.
//
// # Errors
//
// Every failure is a [*SyntaxError] with a 1-based line and column
// (counted in characters) and a message that says what was expected and
// names what was found as written, for example
//
//	syntax error at 1:29: expected FROM or ',' after select item, found 'FORM'
//
// Unterminated strings, quoted identifiers and comments are reported where
// they start.
//
// # Syntax tree
//
// Every node records its position. [Statement], [Expr], [QueryBody] and
// [FromItem] are sealed interfaces; types are [*TypeName] values, not Arrow
// types. [Format] renders any tree back to canonical SQL such that parsing
// the text yields an equal tree (ignoring positions); [Inspect] walks a
// tree.
package sql
