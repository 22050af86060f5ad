package pgwire

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/server"
)

// Statements of the PostgreSQL session that drivers send on their own
// (transaction control, SET and SHOW of the parameters they rely on,
// DISCARD) are answered here; everything else goes to the engine.
// Transactions are accepted for read-only use: every statement sees the
// committed epochs at the moment it runs, and COMMIT and ROLLBACK have
// nothing to undo.

// localResult is the answer of a statement handled by the session.
type localResult struct {
	tag  string
	rows arrow.Record // nil: no rows
}

// pgParams are the parameters SET and SHOW handle, by lower-case name,
// with their canonical names.
var pgParams = map[string]string{
	"client_encoding": "client_encoding", "datestyle": "DateStyle", "extra_float_digits": "extra_float_digits",
	"application_name": "application_name", "search_path": "search_path", "timezone": "TimeZone",
	"intervalstyle": "IntervalStyle", "server_version": "server_version", "server_encoding": "server_encoding",
	"standard_conforming_strings": "standard_conforming_strings", "integer_datetimes": "integer_datetimes",
	"is_superuser": "is_superuser", "session_authorization": "session_authorization",
	"transaction_isolation": "transaction_isolation", "default_transaction_read_only": "default_transaction_read_only",
	"transaction_read_only": "transaction_read_only", "statement_timeout": "statement_timeout",
	"bytea_output": "bytea_output", "max_identifier_length": "max_identifier_length",
}

// readOnlyParams may be shown but not set.
var readOnlyParams = map[string]bool{"server_version": true, "server_encoding": true, "integer_datetimes": true,
	"is_superuser": true, "session_authorization": true, "max_identifier_length": true, "transaction_read_only": true}

// local handles text if it is a session statement.
func (c *conn) local(text string) (*localResult, bool, error) {
	words := strings.Fields(strings.TrimRight(strings.TrimSpace(text), ";"))
	if len(words) == 0 {
		return nil, false, nil
	}
	first := strings.ToUpper(words[0])
	switch first {
	case "BEGIN", "START":
		if first == "START" && (len(words) < 2 || !strings.EqualFold(words[1], "TRANSACTION")) {
			return nil, false, nil
		}
		if c.txn == 'I' {
			c.txn = 'T'
		}
		return &localResult{tag: "BEGIN"}, true, nil
	case "COMMIT", "END":
		c.txn = 'I'
		return &localResult{tag: "COMMIT"}, true, nil
	case "ROLLBACK", "ABORT":
		c.txn = 'I'
		return &localResult{tag: "ROLLBACK"}, true, nil
	case "DISCARD", "DEALLOCATE", "RESET", "UNLISTEN", "CLOSE":
		if first == "DEALLOCATE" && len(words) >= 2 {
			name := words[len(words)-1]
			if strings.EqualFold(name, "ALL") {
				for name := range c.stmts {
					c.dropStmt(name)
				}
			} else {
				c.dropStmt(strings.Trim(name, `"`))
			}
		}
		if first == "RESET" && len(words) == 2 {
			return c.setLocal([]string{"SET", words[1], "TO", "DEFAULT"})
		}
		return &localResult{tag: first + map[bool]string{true: " ALL", false: ""}[first == "DISCARD"]}, true, nil
	case "SET":
		return c.setLocal(words)
	case "SELECT":
		// The server functions drivers call on connecting.
		q := strings.ToLower(strings.Join(words, " "))
		q = strings.TrimSuffix(strings.ReplaceAll(q, "pg_catalog.", ""), ";")
		switch q {
		case "select version()":
			return &localResult{rows: oneText("version", "PostgreSQL "+c.srv.cfg.ServerVersion)}, true, nil
		case "select current_schema()", "select current_schema":
			return &localResult{rows: oneText("current_schema", server.DefaultSchema)}, true, nil
		case "select current_database()":
			return &localResult{rows: oneText("current_database", databaseName)}, true, nil
		case "select current_user", "select session_user", "select user", "select current_user()":
			return &localResult{rows: oneText("current_user", c.sess.User())}, true, nil
		}
		return nil, false, nil
	case "SHOW":
		if len(words) == 4 && strings.EqualFold(words[1], "TRANSACTION") && strings.EqualFold(words[2], "ISOLATION") {
			return &localResult{tag: "SHOW", rows: oneText("transaction_isolation", c.param("transaction_isolation"))}, true, nil
		}
		if len(words) != 2 {
			return nil, false, nil
		}
		name := strings.ToLower(strings.Trim(words[1], `"`))
		if name == "time" || name == "timezone" {
			name = "timezone"
		}
		canon, ok := pgParams[name]
		if !ok {
			return nil, false, nil
		}
		return &localResult{tag: "SHOW", rows: oneText(name, c.param(canon))}, true, nil
	}
	return nil, false, nil
}

func (c *conn) param(canon string) string {
	switch canon {
	case "transaction_isolation":
		// Each statement reads the epochs committed when it starts.
		return "read committed"
	case "transaction_read_only", "default_transaction_read_only":
		return "on"
	case "bytea_output":
		return "hex"
	case "max_identifier_length":
		return "63"
	case "statement_timeout":
		if v, ok := c.params[canon]; ok {
			return v
		}
		return "0"
	}
	return c.params[canon]
}

// setLocal handles SET [SESSION|LOCAL] name {TO|=} value and SET TIME
// ZONE value; settings with a dot (spark.sql.*) go to the engine.
func (c *conn) setLocal(words []string) (*localResult, bool, error) {
	rest := words[1:]
	if len(rest) > 0 && (strings.EqualFold(rest[0], "SESSION") || strings.EqualFold(rest[0], "LOCAL")) {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return nil, false, nil
	}
	var name string
	var value []string
	if len(rest) >= 2 && strings.EqualFold(rest[0], "TIME") && strings.EqualFold(rest[1], "ZONE") {
		name, value = "timezone", rest[2:]
	} else {
		// name may be followed by = or TO, with or without spaces.
		head := rest[0]
		if k := strings.IndexByte(head, '='); k >= 0 {
			name = head[:k]
			value = append([]string{head[k+1:]}, rest[1:]...)
		} else {
			name = head
			value = rest[1:]
			if len(value) > 0 && (value[0] == "=" || strings.EqualFold(value[0], "TO")) {
				value = value[1:]
			} else if len(value) > 0 && strings.HasPrefix(value[0], "=") {
				value[0] = value[0][1:]
			}
		}
	}
	name = strings.ToLower(strings.Trim(name, `"`))
	if strings.Contains(name, ".") {
		return nil, false, nil // the engine's settings
	}
	canon, ok := pgParams[name]
	if !ok {
		return nil, true, &pgError{code: "42704", msg: fmt.Sprintf("unrecognized configuration parameter %q", name)}
	}
	if readOnlyParams[name] {
		return nil, true, &pgError{code: "55P02", msg: fmt.Sprintf("parameter %q cannot be changed", name)}
	}
	v := strings.Join(value, " ")
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '\'' && v[len(v)-1] == '\'') {
		v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	if strings.EqualFold(v, "DEFAULT") || strings.EqualFold(v, "LOCAL") && name == "timezone" {
		v = map[string]string{"timezone": "UTC", "datestyle": "ISO, MDY", "client_encoding": "UTF8", "extra_float_digits": "1",
			"search_path": `"$user", public`, "intervalstyle": "postgres", "bytea_output": "hex", "statement_timeout": "0"}[name]
	}
	if err := c.setParam(canon, v); err != nil {
		return nil, true, err
	}
	return &localResult{tag: "SET"}, true, nil
}

// setParam validates and stores a parameter; TimeZone becomes the
// engine session's time zone, so that timestamps are shown in it.
func (c *conn) setParam(name, v string) error {
	canon := pgParams[strings.ToLower(name)]
	switch canon {
	case "client_encoding":
		switch strings.ToUpper(strings.ReplaceAll(v, "-", "")) {
		case "UTF8", "UNICODE":
			v = "UTF8"
		default:
			return &pgError{code: stateFeatureNotSupp, msg: fmt.Sprintf("client_encoding %q is not supported: this server speaks UTF8", v)}
		}
	case "DateStyle":
		if !strings.Contains(strings.ToUpper(v), "ISO") {
			return &pgError{code: stateFeatureNotSupp, msg: fmt.Sprintf("DateStyle %q is not supported: this server writes ISO dates", v)}
		}
		v = "ISO, MDY"
	case "IntervalStyle":
		if !strings.EqualFold(v, "postgres") {
			return &pgError{code: stateFeatureNotSupp, msg: fmt.Sprintf("IntervalStyle %q is not supported (postgres only)", v)}
		}
	case "bytea_output":
		if !strings.EqualFold(v, "hex") {
			return &pgError{code: stateFeatureNotSupp, msg: fmt.Sprintf("bytea_output %q is not supported (hex only)", v)}
		}
	case "statement_timeout":
		d, err := parseTimeout(v)
		if err != nil {
			return err
		}
		c.stmtTimeout = d
	case "TimeZone":
		zone := v
		if strings.EqualFold(zone, "utc") || strings.EqualFold(zone, "gmt") || zone == "Z" {
			zone = "UTC"
		}
		if _, err := time.LoadLocation(zone); err != nil {
			return &pgError{code: stateInvalidParamValue, msg: fmt.Sprintf("invalid value for parameter \"TimeZone\": %q", v)}
		}
		c.sess.Settings().Set(strings.ToLower(plan.ConfTimeZone), zone)
		v = zone
	}
	if c.params == nil {
		c.params = map[string]string{}
	}
	c.params[canon] = v
	return nil
}

// oneText is a one-row, one-column text result.
func oneText(name, value string) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(value)
	return b.NewRecord()
}
