package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Configuration keys that change what a query means.
const (
	// ConfANSI is spark.sql.ansi.enabled (default true).
	ConfANSI = "spark.sql.ansi.enabled"
	// ConfTimeZone is spark.sql.session.timeZone (default UTC).
	ConfTimeZone = "spark.sql.session.timeZone"
	// ConfHavingAsWhere is spark.sql.legacy.parser.havingWithoutGroupByAsWhere
	// (default false).
	ConfHavingAsWhere = "spark.sql.legacy.parser.havingWithoutGroupByAsWhere"
	// ConfStarInCount is
	// spark.sql.legacy.allowStarWithSingleTableIdentifierInCount (default
	// false).
	ConfStarInCount = "spark.sql.legacy.allowStarWithSingleTableIdentifierInCount"
	// ConfParameterlessCount is spark.sql.legacy.allowParameterlessCount
	// (default false).
	ConfParameterlessCount = "spark.sql.legacy.allowParameterlessCount"
	// ConfQuotedRegexColumnNames is spark.sql.parser.quotedRegexColumnNames
	// (default false).
	ConfQuotedRegexColumnNames = "spark.sql.parser.quotedRegexColumnNames"
	// ConfCTEPrecedence is spark.sql.legacy.ctePrecedencePolicy (EXCEPTION,
	// the default, or CORRECTED).
	ConfCTEPrecedence = "spark.sql.legacy.ctePrecedencePolicy"
	// ConfGroupByOrdinal is spark.sql.groupByOrdinal (default true).
	ConfGroupByOrdinal = "spark.sql.groupByOrdinal"
	// ConfOrderByOrdinal is spark.sql.orderByOrdinal (default true).
	ConfOrderByOrdinal = "spark.sql.orderByOrdinal"
	// ConfStrictIndexOperator is spark.sql.ansi.strictIndexOperator
	// (default true).
	ConfStrictIndexOperator = "spark.sql.ansi.strictIndexOperator"
	// ConfTimestampType is spark.sql.timestampType: TIMESTAMP_LTZ (the
	// default) or TIMESTAMP_NTZ.
	ConfTimestampType = "spark.sql.timestampType"
)

// Options are the session settings that analysis records in a plan: the
// analyzer stamps them into every cast and function call, so that folding,
// planning and execution all see the same semantics and no global state is
// involved.
type Options struct {
	// ANSI is spark.sql.ansi.enabled: invalid casts, overflow and division
	// by zero raise Spark's errors; without it they give Spark 3's results.
	ANSI bool
	// TimeZone is spark.sql.session.timeZone; nil means UTC.
	TimeZone *time.Location
	// TimestampNTZ is spark.sql.timestampType=TIMESTAMP_NTZ: TIMESTAMP in
	// types and literals, to_timestamp and make_timestamp mean
	// TIMESTAMP_NTZ (timestamp_type.go).
	TimestampNTZ bool
	// LenientIndex is spark.sql.ansi.strictIndexOperator=false: under
	// ANSI the subscript operator (a[i], m[k]) is NULL for an index out
	// of range or a missing key, as without ANSI; element_at still raises.
	LenientIndex bool
	// Legacy are Spark's legacy parser and analyzer switches; they change
	// what a statement means, so analysis reads them.
	Legacy LegacySwitches
}

// LegacySwitches are Spark's spark.sql.legacy.* settings, and the other
// parser/analyzer switches, the analyzer honours (the zero value is
// Spark's defaults).
type LegacySwitches struct {
	// NoGroupByOrdinal is spark.sql.groupByOrdinal=false: an integer
	// literal in GROUP BY is a constant, not a select item's position.
	NoGroupByOrdinal bool
	// NoOrderByOrdinal is spark.sql.orderByOrdinal=false: likewise in
	// ORDER BY (sorting by a constant keeps any order).
	NoOrderByOrdinal bool
	// HavingAsWhere: HAVING without GROUP BY filters the rows, as WHERE,
	// instead of making the query a global aggregate.
	HavingAsWhere bool
	// StarInCount: count(t.*) counts the rows whose columns of t are all
	// non-NULL, as count(a, b, ...).
	StarInCount bool
	// ParameterlessCount: count() without arguments is accepted, as
	// Spark 2 did, instead of refused.
	ParameterlessCount bool
	// QuotedRegexColumnNames: a backquoted select item that is not a
	// plain name (`(a)?+.+`, t.`(x|y)`) is a regular expression selecting
	// the columns whose names match it.
	QuotedRegexColumnNames bool
	// CTECorrected: spark.sql.legacy.ctePrecedencePolicy=CORRECTED, a
	// nested WITH may redefine an enclosing one's name (the inner
	// definition wins) instead of being refused.
	CTECorrected bool
	// CTELegacy: spark.sql.legacy.ctePrecedencePolicy=LEGACY, Spark 2's
	// order of CTE substitution (cte_legacy.go); CTECorrected is set too
	// (no name conflict is refused).
	CTELegacy bool
}

// DefaultOptions are Spark 4's defaults: ANSI on, UTC.
func DefaultOptions() Options { return Options{ANSI: true} }

// mode is the evaluation mode of casts and operators under o.
func (o Options) mode() vector.EvalMode {
	if o.ANSI {
		return vector.ModeANSI
	}
	return vector.ModeLegacy
}

func (o Options) loc() *time.Location {
	if o.TimeZone == nil || o.TimeZone == time.UTC {
		return nil
	}
	return o.TimeZone
}

// OptionsFromConf reads Options from configuration settings (a session's
// conf, a statement's TBLPROPERTIES): unset keys keep base's values; a bad
// value is an error naming the key.
func OptionsFromConf(base Options, conf map[string]string) (Options, error) {
	o := base
	for k, v := range conf {
		switch {
		case strings.EqualFold(k, ConfANSI):
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return o, fmt.Errorf("plan: %s must be true or false, got %q: %w", ConfANSI, v, ErrType)
			}
			o.ANSI = b
		case strings.EqualFold(k, ConfGroupByOrdinal), strings.EqualFold(k, ConfOrderByOrdinal):
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return o, fmt.Errorf("plan: %s must be true or false, got %q: %w", k, v, ErrType)
			}
			if strings.EqualFold(k, ConfGroupByOrdinal) {
				o.Legacy.NoGroupByOrdinal = !b
			} else {
				o.Legacy.NoOrderByOrdinal = !b
			}
		case strings.EqualFold(k, ConfHavingAsWhere), strings.EqualFold(k, ConfStarInCount), strings.EqualFold(k, ConfParameterlessCount):
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return o, fmt.Errorf("plan: %s must be true or false, got %q: %w", k, v, ErrType)
			}
			switch {
			case strings.EqualFold(k, ConfHavingAsWhere):
				o.Legacy.HavingAsWhere = b
			case strings.EqualFold(k, ConfStarInCount):
				o.Legacy.StarInCount = b
			default:
				o.Legacy.ParameterlessCount = b
			}
		case strings.EqualFold(k, ConfStrictIndexOperator):
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return o, fmt.Errorf("plan: %s must be true or false, got %q: %w", k, v, ErrType)
			}
			o.LenientIndex = !b
		case strings.EqualFold(k, ConfQuotedRegexColumnNames):
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return o, fmt.Errorf("plan: %s must be true or false, got %q: %w", k, v, ErrType)
			}
			o.Legacy.QuotedRegexColumnNames = b
		case strings.EqualFold(k, ConfCTEPrecedence):
			switch strings.ToUpper(strings.TrimSpace(v)) {
			case "EXCEPTION":
				o.Legacy.CTECorrected, o.Legacy.CTELegacy = false, false
			case "CORRECTED":
				o.Legacy.CTECorrected, o.Legacy.CTELegacy = true, false
			case "LEGACY":
				o.Legacy.CTECorrected, o.Legacy.CTELegacy = true, true
			default:
				return o, fmt.Errorf("plan: %s must be EXCEPTION, CORRECTED or LEGACY, got %q: %w", k, v, ErrUnsupported)
			}
		case strings.EqualFold(k, ConfTimestampType):
			switch strings.ToUpper(strings.TrimSpace(v)) {
			case "TIMESTAMP_LTZ":
				o.TimestampNTZ = false
			case "TIMESTAMP_NTZ":
				o.TimestampNTZ = true
			default:
				return o, fmt.Errorf("plan: %s must be TIMESTAMP_LTZ or TIMESTAMP_NTZ, got %q: %w", k, v, ErrType)
			}
		case strings.EqualFold(k, ConfTimeZone):
			loc, err := LoadTimeZone(v)
			if err != nil {
				return o, err
			}
			o.TimeZone = loc
		}
	}
	return o, nil
}

// LoadTimeZone resolves a spark.sql.session.timeZone value: a region
// (Europe/Paris), UTC/Z, or a fixed offset (+01:00, -08:00, UTC+2).
func LoadTimeZone(v string) (*time.Location, error) {
	name := strings.TrimSpace(v)
	switch strings.ToUpper(name) {
	case "UTC", "Z", "GMT", "UT":
		return time.UTC, nil
	}
	off := name
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if len(off) > len(p) && strings.EqualFold(off[:len(p)], p) && (off[len(p)] == '+' || off[len(p)] == '-') {
			off = off[len(p):]
			break
		}
	}
	if len(off) > 1 && (off[0] == '+' || off[0] == '-') {
		if secs, ok := parseOffset(off[1:]); ok {
			if off[0] == '-' {
				secs = -secs
			}
			return time.FixedZone(name, secs), nil
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, fmt.Errorf("plan: %s: unknown time zone %q: %w", ConfTimeZone, v, ErrType)
	}
	return loc, nil
}

// parseOffset reads h, hh, hh:mm or hhmm (at most 18 hours).
func parseOffset(s string) (int, bool) {
	h, m, sec := s, "0", "0"
	if i := strings.IndexByte(s, ':'); i >= 0 {
		h, m = s[:i], s[i+1:]
		// Java's ZoneOffset also takes seconds: +hh:mm:ss.
		if j := strings.IndexByte(m, ':'); j >= 0 {
			m, sec = m[:j], m[j+1:]
			if len(m) != 2 || len(sec) != 2 {
				return 0, false
			}
		}
	} else if len(s) == 4 {
		h, m = s[:2], s[2:]
	}
	hv, err1 := strconv.Atoi(h)
	mv, err2 := strconv.Atoi(m)
	sv, err3 := strconv.Atoi(sec)
	if err1 != nil || err2 != nil || err3 != nil || len(h) > 2 || hv > 18 || mv > 59 || mv < 0 || hv < 0 || sv < 0 || sv > 59 {
		return 0, false
	}
	total := hv*3600 + mv*60 + sv
	if total > 18*3600 {
		return 0, false
	}
	return total, true
}

// wallToInstant reads wall-clock microseconds (a local date and time
// counted as if UTC) in loc.
func wallToInstant(loc *time.Location, wall int64) int64 {
	secs := wall / 1_000_000
	frac := wall % 1_000_000
	if frac < 0 {
		secs, frac = secs-1, frac+1_000_000
	}
	t := time.Unix(secs, 0).UTC()
	l := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
	return l.Unix()*1_000_000 + frac
}

// applyOptions stamps o into every cast and call of n (try_ functions
// keep their own mode).
func applyOptions(n Node, o Options) (Node, error) { return applyOptionsAbove(n, o, nil) }

// applyOptionsAbove is applyOptions over the operators of n down to, not
// into, the nodes of stop: a DataFrame operation stamps what it added on
// top of inputs that were stamped when they were built, perhaps under
// other settings.
func applyOptionsAbove(n Node, o Options, stop []Node) (Node, error) {
	stamp := optionStamp(o)
	if stamp == nil {
		return n, nil
	}
	var rec func(Node) (Node, error)
	rec = func(n Node) (Node, error) {
		var err error
		n = mapChildren(n, func(k Node) Node {
			if err != nil || slices.Contains(stop, k) {
				return k
			}
			var r Node
			r, err = rec(k)
			return r
		})
		if err != nil {
			return nil, err
		}
		if n, err = mapExprs(n, stamp); err != nil {
			return nil, err
		}
		return stampWindowZone(n, o.loc()), nil
	}
	if slices.Contains(stop, n) {
		return n, nil
	}
	return rec(n)
}

// stampWindowZone gives a Window's frames with year-month bounds the
// session time zone, which moves a TIMESTAMP key's wall clock by months
// (frames are no expressions, so optionStamp does not reach them).
func stampWindowZone(n Node, loc *time.Location) Node {
	w, ok := n.(*Window)
	if !ok {
		return n
	}
	var c *Window
	for i, f := range w.Funcs {
		if f.Frame.Start.Months == 0 && f.Frame.End.Months == 0 {
			continue
		}
		if c == nil {
			cp := *w
			cp.Funcs = slices.Clone(w.Funcs)
			c = &cp
		}
		c.Funcs[i].Frame.Loc = loc
	}
	if c == nil {
		return n
	}
	return c
}

// optionStamp is the rewrite that stamps o into one expression's casts and
// calls, or nil when o's are the zero values (ANSI, UTC) they already have.
func optionStamp(o Options) func(Expr) (Expr, error) {
	mode, loc := o.mode(), o.loc()
	lenientIndex := mode == vector.ModeANSI && o.LenientIndex
	if mode == vector.ModeANSI && loc == nil && !lenientIndex {
		return nil // the zero values already say so
	}
	return func(e Expr) (Expr, error) {
		return Transform(e, func(x Expr) (Expr, error) {
			switch y := x.(type) {
			case *Literal:
				if !y.wallClock || loc == nil {
					return x, nil
				}
				ts, ok := y.Value.(arrow.Timestamp)
				if !ok {
					return x, nil
				}
				return &Literal{Value: arrow.Timestamp(wallToInstant(loc, int64(ts))), Type: y.Type}, nil
			case *Cast:
				if mode == vector.ModeLegacy && y.legacyTo != nil {
					if arrow.TypeEqual(vector.Unwrap(y.X.DataType()), y.legacyTo) {
						return y.X, nil
					}
				}
				c := *y
				if mode == vector.ModeLegacy && c.legacyTo != nil {
					c.To = c.legacyTo
				}
				if c.Mode != vector.ModeTry {
					c.Mode = mode
				}
				c.Loc = loc
				return &c, nil
			case *Call:
				c := *y
				if c.Mode != vector.ModeTry {
					c.Mode = mode
					if lenientIndex && c.Func == "subscript" {
						c.Mode = vector.ModeLegacy
					}
				}
				c.Loc = loc
				// newCall folded constant calls with the defaults (ANSI,
				// UTC); under other settings the value may differ, so the
				// optimizer must fold the call again.
				c.typing.folded = nil
				return &c, nil
			}
			return x, nil
		})
	}
}
