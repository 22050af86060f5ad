package main

import (
	"context"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// completer completes the word before the cursor: dot commands at the
// start of a line, columns after "table.", else table names, column
// names and keywords (in the case the word was typed in). It implements
// readline.AutoCompleter. Tables and columns come from the server's
// catalog (GetTables with schemas), refreshed after every command.
type completer struct {
	mu      sync.Mutex
	tables  []string
	columns map[string][]string // lower-case table name → columns
}

func newCompleter() *completer { return &completer{columns: map[string][]string{}} }

// completionKeywords are the words offered besides names.
var completionKeywords = []string{
	"SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "JOIN", "LEFT", "RIGHT", "FULL",
	"INNER", "OUTER", "CROSS", "ON", "USING", "AS", "AND", "OR", "NOT", "NULL", "IS", "IN", "LIKE", "BETWEEN",
	"CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "DISTINCT", "UNION", "ALL", "WITH", "VALUES", "ASC", "DESC",
	"CREATE", "STREAMING", "TABLE", "TABLES", "TBLPROPERTIES", "OPTIONS", "DROP", "SHOW", "DESCRIBE", "HISTORY",
	"EXPLAIN", "INSERT", "INTO", "SET", "STREAM", "WATERMARK", "DELAY", "INTERVAL", "WINDOW", "VERSION", "OF",
	"SUBSCRIBE", "SINCE", "EPOCH", "TIMESTAMP", "DATE", "TRUE", "FALSE", "COUNT", "SUM", "AVG", "MIN", "MAX",
}

// shellCommands are the dot commands offered at the start of a line.
var shellCommands = []string{".exit", ".help", ".mode", ".pager", ".quit", ".read", ".schema", ".tables", ".timer"}

// refresh reloads the table and column names; errors leave the old ones.
func (c *completer) refresh(ctx context.Context, cl *flightsql.Client) {
	if c == nil || cl == nil {
		return
	}
	info, err := cl.GetTables(ctx, &flightsql.GetTablesOpts{IncludeSchema: true})
	if err != nil || len(info.Endpoint) == 0 {
		return
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return
	}
	defer rdr.Release()
	var tables []string
	columns := map[string][]string{}
	for rdr.Next() {
		rec := rdr.Record()
		schemas, _ := rec.Column(1).(*array.String)
		names, _ := rec.Column(2).(*array.String)
		defs, _ := rec.Column(4).(*array.Binary)
		if names == nil || defs == nil {
			return
		}
		for i := range int(rec.NumRows()) {
			name := names.Value(i)
			if schemas != nil && schemas.Value(i) != "default" {
				name = schemas.Value(i) + "." + name
			}
			tables = append(tables, name)
			if s, err := flight.DeserializeSchema(defs.Value(i), memory.DefaultAllocator); err == nil {
				for _, f := range s.Fields() {
					columns[strings.ToLower(name)] = append(columns[strings.ToLower(name)], f.Name)
				}
			}
		}
	}
	if rdr.Err() != nil {
		return
	}
	sort.Strings(tables)
	c.mu.Lock()
	c.tables, c.columns = tables, columns
	c.mu.Unlock()
}

// Do implements readline.AutoCompleter: the suffixes that complete the
// word ending at pos, and the length of that word.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && isNameRune(line[start-1]) {
		start--
	}
	word := string(line[start:pos])
	if strings.HasPrefix(word, ".") && strings.TrimSpace(string(line[:start])) == "" {
		return suffixes(shellCommands, word), len(word)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if dot := strings.LastIndexByte(word, '.'); dot >= 0 {
		table, col := word[:dot], word[dot+1:]
		if cands, ok := c.columns[strings.ToLower(table)]; ok {
			return suffixes(cands, col), len(col)
		}
		return suffixes(c.tables, word), len(word) // a qualified table name

	}
	if word == "" {
		return nil, 0
	}
	var cands []string
	cands = append(cands, c.tables...)
	seen := map[string]bool{}
	for _, cols := range c.columns {
		for _, col := range cols {
			if !seen[col] {
				seen[col] = true
				cands = append(cands, col)
			}
		}
	}
	sort.Strings(cands[len(c.tables):])
	lower := strings.ToLower(word) == word
	for _, k := range completionKeywords {
		if lower {
			k = strings.ToLower(k)
		}
		cands = append(cands, k)
	}
	return suffixes(cands, word), len(word)
}

// suffixes returns what completes prefix to each candidate (matched case
// insensitively), each followed by a space.
func suffixes(cands []string, prefix string) [][]rune {
	var out [][]rune
	seen := map[string]bool{}
	for _, c := range cands {
		if len(c) < len(prefix) || !strings.EqualFold(c[:len(prefix)], prefix) || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, []rune(c[len(prefix):]+" "))
	}
	return out
}

func isNameRune(r rune) bool {
	return r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
