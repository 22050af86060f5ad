package sql

import (
	"unicode"
	"unicode/utf8"
)

// tokKind is the lexical class of a token. Punctuation gets one kind per
// operator so that the parser compares small integers, not strings.
type tokKind uint8

const (
	tEOF    tokKind = iota
	tErr            // a lexical error; token.err holds it and it is the last token
	tWord           // an unquoted identifier or keyword
	tQuoted         // a `backquoted` identifier; text is the unescaped name
	tString         // a 'string' or "string"; text is the decoded value
	tNumber         // a numeric literal as written, suffix included
	tBinary         // X'hex'; text is the hex digits

	tLParen     // (
	tRParen     // )
	tLBracket   // [
	tRBracket   // ]
	tComma      // ,
	tDot        // .
	tSemi       // ;
	tColon      // :
	tColonColon // ::
	tStar       // *
	tPlus       // +
	tMinus      // -
	tSlash      // /
	tPercent    // %
	tConcat     // ||
	tAmp        // &
	tPipe       // |
	tCaret      // ^
	tTilde      // ~
	tEq         // =
	tEqEq       // ==
	tNe         // <>
	tBangEq     // !=
	tLt         // <
	tLe         // <=
	tGt         // >
	tGe         // >=
	tNullSafeEq // <=>
	tParam      // $n, a statement parameter; text is the digits
	tArrow      // -> (a lambda)
)

// token is one lexical token. raw is the exact source text, used to name
// the token in error messages as the user wrote it.
type token struct {
	kind tokKind
	kw   string // upper-case keyword for a tWord that is a keyword, else ""
	text string // name, decoded string value, or hex digits
	raw  string
	pos  Pos
	err  *SyntaxError // for tErr
}

// keywords maps every word the parser gives a meaning to, upper-cased, to
// whether it is reserved. Reserved words cannot be bare names where a name
// and a keyword would be ambiguous, though they may still follow AS or
// '.'. They are the words of Spark's ANSI reserved list that this grammar
// uses (clause, join and operator keywords, literals, CASE and CAST) plus
// a few that stay reserved so that unsupported syntax fails clearly
// (INTERSECT, EXCEPT, LATERAL, NATURAL). The rest of Spark's list (TIME,
// USER, TO, ...) is left to be ordinary names, as Spark itself allows
// unless spark.sql.ansi.enforceReservedKeywords is set. Non-reserved
// keywords act as keywords only where the grammar expects one.
var keywords = map[string]bool{
	// Reserved.
	"ALL": true, "AND": true, "AS": true, "CASE": true, "CAST": true,
	"CROSS": true, "CURRENT_DATE": true, "CURRENT_TIMESTAMP": true,
	"DISTINCT": true, "ELSE": true, "END": true, "EXCEPT": true,
	"FALSE": true, "FROM": true, "FULL": true, "GROUP": true, "HAVING": true,
	"IN": true, "INNER": true, "INTERSECT": true, "IS": true, "JOIN": true,
	"LATERAL": true, "LEFT": true, "NATURAL": true, "NOT": true, "NULL": true,
	"ON": true, "OR": true, "ORDER": true, "OUTER": true, "RIGHT": true,
	"SELECT": true, "TABLE": true, "THEN": true, "TRUE": true, "UNION": true,
	"USING": true, "WHEN": true, "WHERE": true, "WITH": true,

	// Non-reserved: keywords only where the grammar expects them.
	"ANTI": false, "ASC": false, "BETWEEN": false, "BY": false,
	"CREATE": false, "DATE": false, "DELAY": false, "DESC": false,
	"DESCRIBE": false, "DIV": false, "DROP": false, "ESCAPE": false,
	"EXISTS": false, "EXPLAIN": false, "EXTENDED": false, "FILTER": false,
	"FIRST": false, "FOR": false, "HISTORY": false, "IF": false,
	"ILIKE": false, "INTERVAL": false, "LAST": false, "LIKE": false,
	"LIMIT": false, "OFFSET": false, "MINUS": false, "NULLS": false, "OF": false,
	"OPTIONS": false, "OVER": false, "REFRESH": false, "REGEXP": false,
	"RLIKE": false, "SEMI": false, "SHOW": false, "STREAM": false,
	"STREAMING": false, "SYSTEM_VERSION": false, "TABLES": false,
	"TBLPROPERTIES": false, "TIMESTAMP": false, "TIMESTAMP_LTZ": false,
	"TIMESTAMP_NTZ": false, "TRY_CAST": false,
	"VERSION": false, "WATERMARK": false,
	"GLOBAL": false, "TEMPORARY": false, "TEMP": false, "VIEW": false,
	"REPLACE": false, "VALUES": false, "SET": false,
	"INSERT": false, "INTO": false, "OVERWRITE": false,
	"PARTITION": false, "DISTRIBUTE": false, "SORT": false, "ROWS": false, "RANGE": false,
	"UNBOUNDED": false, "PRECEDING": false, "FOLLOWING": false, "CURRENT": false, "ROW": false,
	"IGNORE": false, "RESPECT": false, "QUALIFY": false, "WINDOW": false,
	"WITHIN": false,
}

// notAlias lists non-reserved words that cannot be an alias written
// without AS, because a clause may start with them right where an alias
// could stand (Spark's strict-non-reserved words plus LIMIT and OFFSET).
var notAlias = map[string]bool{"LIMIT": true, "OFFSET": true, "ANTI": true, "SEMI": true, "MINUS": true, "QUALIFY": true}

// quoteWhenFormatting lists non-reserved words that Format backquotes when
// they are used as names, because in some position they start a construct
// (a stream read, a typed or interval literal).
var quoteWhenFormatting = map[string]bool{
	"STREAM": true, "INTERVAL": true, "DATE": true, "TIMESTAMP": true,
	"TIMESTAMP_LTZ": true, "TIMESTAMP_NTZ": true,
	"LIMIT": true, "OFFSET": true, "ANTI": true, "SEMI": true, "MINUS": true,
}

// lookupKeyword returns the canonical upper-case keyword for word, or ""
// when word is not a keyword. It avoids allocating for ASCII words that fit
// the buffer, which is all keywords.
func lookupKeyword(word string) string {
	var buf [24]byte
	if len(word) > len(buf) {
		return ""
	}
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		} else if c >= utf8.RuneSelf {
			return ""
		}
		buf[i] = c
	}
	// Indexing a map with a converted byte slice does not allocate, and the
	// value is the interned key, so tokens share one string per keyword.
	return canonicalKeyword[string(buf[:len(word)])]
}

// canonicalKeyword maps each keyword to itself.
var canonicalKeyword = func() map[string]string {
	m := make(map[string]string, len(keywords))
	for k := range keywords {
		m[k] = k
	}
	return m
}()

// isReserved reports whether the upper-case keyword kw is reserved.
func isReserved(kw string) bool { return keywords[kw] }

func isIdentStart(r rune) bool {
	return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') ||
		(r >= utf8.RuneSelf && unicode.IsLetter(r))
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || ('0' <= r && r <= '9') ||
		(r >= utf8.RuneSelf && unicode.IsDigit(r))
}

// isPlainIdent reports whether s lexes as a single unquoted word.
func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError {
			return false
		}
		if i == 0 && !isIdentStart(r) || !isIdentPart(r) {
			return false
		}
	}
	// X'..' is a binary literal, but only when the quote follows at once;
	// a plain x never needs quoting.
	return true
}
