package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// SET over Flight SQL changes the client's session (its connection), not
// the server's embedded session: two connections can run with different
// spark.sql.ansi.enabled or spark.sql.session.timeZone at once. A session
// starts from the embedded session's values.

// setSchema is the result of SET, as Spark's: the key and its value.
var setSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: vector.String, Nullable: true},
	{Name: "value", Type: vector.String, Nullable: true},
}, nil)

// sessionKeys are the settings that change what a query means; they are
// what a client session's settings override.
var sessionKeys = []string{plan.ConfANSI, plan.ConfTimeZone}

// parseSet returns text as a SET statement, or nil when it is another
// statement (or does not parse: planning reports that).
func parseSet(text string) *sql.Set {
	stmt, err := sql.Parse(text)
	if err != nil {
		return nil
	}
	x, _ := stmt.(*sql.Set)
	return x
}

// checkSet refuses what the embedded session refuses: a setting the
// engine does not honour, or a value it cannot read.
func checkSet(x *sql.Set) error {
	if !x.HasValue {
		return nil
	}
	if err := plan.CheckSetting(x.Key, x.Value); err != nil {
		return err
	}
	if _, err := plan.OptionsFromConf(plan.DefaultOptions(), map[string]string{x.Key: x.Value}); err != nil {
		return err
	}
	return nil
}

// set runs SET [key [= value]] for the client session s and returns its
// one-row answer.
func (e *SessionEngine) set(x *sql.Set, s *Settings) (*arrow.Schema, OpenFunc, error) {
	if err := checkSet(x); err != nil {
		return nil, nil, err
	}
	if x.HasValue {
		s.Set(strings.ToLower(x.Key), x.Value)
	}
	value := e.setting(x.Key, s)
	open := func(context.Context) (vector.Operator, error) {
		b := array.NewRecordBuilder(e.sess.Allocator(), setSchema)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append(x.Key)
		b.Field(1).(*array.StringBuilder).Append(value)
		rec := b.NewRecord()
		defer rec.Release()
		return vector.NewScan(setSchema, rec)
	}
	return setSchema, open, nil
}

// setting is the value of key in the client session s: its own SET, else
// the embedded session's, else "<undefined>" (Spark's answer).
func (e *SessionEngine) setting(key string, s *Settings) string {
	if s != nil {
		if v, ok := s.Get(strings.ToLower(key)); ok {
			return v
		}
	}
	if v, ok := e.sess.Conf(key); ok {
		return v
	}
	return "<undefined>"
}

// options are the plan options of a request: the embedded session's ANSI
// mode and time zone, overridden by the client session's SETs.
func (e *SessionEngine) options(s *Settings) (plan.Options, error) {
	conf := map[string]string{}
	for _, k := range sessionKeys {
		if v, ok := e.sess.Conf(k); ok {
			conf[k] = v
		}
	}
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), conf)
	if err != nil || s == nil {
		return opts, err
	}
	return plan.OptionsFromConf(opts, s.Snapshot())
}

// errSessionDDL refuses a statement whose query the embedded session would
// analyze under other settings than the client session's.
var errSessionDDL = errors.New("the statement would run under the server session's settings")

// checkSessionDDL refuses CREATE STREAMING TABLE, CREATE TABLE ... AS and INSERT from a client
// session whose ANSI mode or time zone differ from the embedded session's:
// those queries are analyzed and kept by the embedded session, so they
// would silently run under its settings. (TBLPROPERTIES can carry the
// settings of a streaming table.)
func (e *SessionEngine) checkSessionDDL(ctx context.Context, req Request) error {
	if req.Settings == nil || len(req.Settings.Snapshot()) == 0 {
		return nil
	}
	stmt, err := sql.Parse(req.SQL)
	if err != nil {
		return nil // the run reports it
	}
	switch x := stmt.(type) {
	case *sql.CreateStreamingTable, *sql.Insert:
	case *sql.CreateTable:
		if x.Query == nil {
			return nil
		}
	default:
		return nil
	}
	mine, err := e.options(req.Settings)
	if err != nil {
		return err
	}
	server, err := e.options(nil)
	if err != nil {
		return err
	}
	if mine.ANSI == server.ANSI && zoneName(mine) == zoneName(server) {
		return nil
	}
	return fmt.Errorf("%q: %w (%s=%t, %s=%s) rather than this session's SETs (%t, %s); set them in TBLPROPERTIES or on the server: %w",
		firstWords(req.SQL), errSessionDDL, plan.ConfANSI, server.ANSI, plan.ConfTimeZone, zoneName(server), mine.ANSI, zoneName(mine), ErrUnsupported)
}

func zoneName(o plan.Options) string {
	if o.TimeZone == nil {
		return "UTC"
	}
	return o.TimeZone.String()
}
