package vector_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestEpochFunctions(t *testing.T) {
	i64 := schemaOf("x", vector.Int64)
	vt.RunExpr(t,
		vt.ExprCase{Name: "seconds", Schema: i64, Rows: column(1, -1, 1_767_225_600), Expr: vector.TimestampSeconds(vector.Col("x")),
			Want: []any{1_000_000, -1_000_000, tsMicros("2026-01-01 00:00:00")}, WantType: vector.Timestamp, NullIntolerant: true},
		vt.ExprCase{Name: "seconds-int", Schema: schemaOf("x", vector.Int32), Rows: column(2), Expr: vector.TimestampSeconds(vector.Col("x")),
			Want: []any{2_000_000}, NullIntolerant: true},
		vt.ExprCase{Name: "seconds-double", Schema: schemaOf("x", vector.Float64), Rows: column(1.5, -0.000001, math.NaN(), math.Inf(1)),
			Expr: vector.TimestampSeconds(vector.Col("x")), Want: []any{1_500_000, -1, nil, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "seconds-decimal", Schema: schemaOf("x", vector.Decimal(10, 3)), Rows: column("1.5"),
			Expr: vector.TimestampSeconds(vector.Col("x")), Want: []any{1_500_000}, NullIntolerant: true},
		vt.ExprCase{Name: "seconds-overflow", Schema: i64, Rows: column(int64(math.MaxInt64 / 100)),
			Expr: vector.TimestampSeconds(vector.Col("x")), WantErr: "in timestamp_seconds(x) at row 0 (x=92233720368547758)"},
		vt.ExprCase{Name: "millis", Schema: i64, Rows: column(1500, -1), Expr: vector.TimestampMillis(vector.Col("x")),
			Want: []any{1_500_000, -1000}, NullIntolerant: true},
		vt.ExprCase{Name: "micros", Schema: i64, Rows: column(7), Expr: vector.TimestampMicros(vector.Col("x")), Want: []any{7}, NullIntolerant: true},
		vt.ExprCase{Name: "millis-double", Schema: schemaOf("x", vector.Float64), Rows: column(1.0), Expr: vector.TimestampMillis(vector.Col("x")),
			WantErr: "cannot bind timestamp_millis(x): x must be an integer, not double"},
		vt.ExprCase{Name: "seconds-string", Schema: schemaOf("x", vector.String), Rows: column("1"), Expr: vector.TimestampSeconds(vector.Col("x")),
			WantErr: "x must be numeric, not string"},
	)
}

func TestUnixTimestampAndToTimestamp(t *testing.T) {
	s := schemaOf("s", vector.String)
	d := schemaOf("s", dictString)
	vt.RunExpr(t,
		vt.ExprCase{Name: "unix-default", Schema: s, Rows: column("2026-01-01 00:00:00", "2026-01-01", "garbage", "2026-01-01 00:00:01"),
			Expr: legacyMode(vector.UnixTimestamp(vector.Col("s"), nil)), Want: []any{1_767_225_600, nil, nil, 1_767_225_601}, WantType: vector.Int64, NullIntolerant: true},
		vt.ExprCase{Name: "unix-dictionary", Schema: d, Rows: column("2026-01-01 00:00:00", "x", "2026-01-01 00:00:00"),
			Expr: legacyMode(vector.UnixTimestamp(vector.Col("s"), nil)), Want: []any{1_767_225_600, nil, 1_767_225_600}, NullIntolerant: true},
		vt.ExprCase{Name: "unix-fmt", Schema: s, Rows: column("01/02/2026 10:30", "01/32/2026 10:30"),
			Expr: legacyMode(vector.UnixTimestamp(vector.Col("s"), vector.Lit("MM/dd/yyyy HH:mm"))), Want: []any{1_767_349_800, nil}, NullIntolerant: true},
		// Spark 2's parser reads one-digit months: Spark raises rather than
		// answer NULL (INCONSISTENT_BEHAVIOR_CROSS_VERSION).
		vt.ExprCase{Name: "unix-fmt-legacy-parses", Schema: s, Rows: column("1/2/2026 10:30"),
			Expr: legacyMode(vector.UnixTimestamp(vector.Col("s"), vector.Lit("MM/dd/yyyy HH:mm"))), WantErr: "INCONSISTENT_BEHAVIOR_CROSS_VERSION"},
		vt.ExprCase{Name: "unix-timestamp", Schema: schemaOf("t", vector.Timestamp), Rows: column(-1, 1_999_999),
			Expr: vector.UnixTimestamp(vector.Col("t"), nil), Want: []any{-1, 1}, NullIntolerant: true},
		vt.ExprCase{Name: "unix-date", Schema: schemaOf("t", vector.Date), Rows: column(int64(1)),
			Expr: vector.UnixTimestamp(vector.Col("t"), nil), Want: []any{86400}, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp-cast", Schema: s, Rows: column("2026-01-01T10:00:00Z", "nope"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), nil)), Want: []any{tsMicros("2026-01-01 10:00:00"), nil}, WantType: vector.Timestamp, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp-fraction", Schema: s,
			Rows: column("2026-01-01 10:00:00.5", "2026-01-01 10:00:00.123", "2026-01-01 10:00:00.1234", "2026-01-01 10:00:00"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyy-MM-dd HH:mm:ss.SSS"))),
			Want: []any{tsMicros("2026-01-01 10:00:00.5"), tsMicros("2026-01-01 10:00:00.123"), nil, nil}, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp-patterns", Schema: s,
			Rows: column("2026-01-01T10:00:00+0200", "2026-01-01T10:00:00Z", "2026-01-01T10:00:00-05:30"),
			Expr: vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyy-MM-dd'T'HH:mm:ssX")),
			Want: []any{tsMicros("2026-01-01 08:00:00"), tsMicros("2026-01-01 10:00:00"), tsMicros("2026-01-01 15:30:00")}, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp-text", Schema: s,
			Rows: column("Mon, 05 Jan 2026 03:04:05 PM UTC", "mon, 05 JAN 2026 12:00:00 AM PST", "Tue 05 Jan 2026 01:00:00 PM UTC"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit("EEE, dd MMM yyyy hh:mm:ss a z"))),
			Want: []any{tsMicros("2026-01-05 15:04:05"), tsMicros("2026-01-05 08:00:00"), nil}, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp-compact", Schema: s, Rows: column("20260102", "20261302"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyyMMdd"))), Want: []any{tsMicros("2026-01-02 00:00:00"), nil}, NullIntolerant: true},
		vt.ExprCase{Name: "to-timestamp-compact-legacy-parses", Schema: s, Rows: column("2026012"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyyMMdd"))), WantErr: "INCONSISTENT_BEHAVIOR_CROSS_VERSION"},
		vt.ExprCase{Name: "to-timestamp-doy", Schema: s, Rows: column("2024 060", "2026 366"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyy DDD"))), Want: []any{tsMicros("2024-02-29 00:00:00"), nil}, NullIntolerant: true},
		vt.ExprCase{Name: "to-date-fmt", Schema: s, Rows: column("02.01.2026", "31.02.2026"),
			Expr: legacyMode(vector.ToDate(vector.Col("s"), vector.Lit("dd.MM.yyyy"))), Want: []any{dateDays("2026-01-02"), nil}, WantType: vector.Date, NullIntolerant: true},
		vt.ExprCase{Name: "to-date-cast", Schema: s, Rows: column("2026-01-02 10:00"),
			Expr: vector.ToDate(vector.Col("s"), nil), Want: []any{dateDays("2026-01-02")}, NullIntolerant: true},
		vt.ExprCase{Name: "bad-pattern", Schema: s, Rows: column("x"), Expr: vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyy-ww")),
			WantErr: "cannot bind to_timestamp(s, 'yyyy-ww'): invalid datetime pattern 'yyyy-ww': week-based pattern letter 'w' is not supported"},
		vt.ExprCase{Name: "bad-pattern-quote", Schema: s, Rows: column("x"), Expr: vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyy'")),
			WantErr: "unterminated quote"},
		vt.ExprCase{Name: "bad-pattern-letter", Schema: s, Rows: column("x"), Expr: vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyy-MM-dd T")),
			WantErr: "unsupported pattern letter 'T'"},
		vt.ExprCase{Name: "non-constant-format", Schema: schemaOf("s", vector.String, "f", vector.String), Rows: []vt.Row{{"x", "y"}},
			Expr: vector.ToTimestamp(vector.Col("s"), vector.Col("f")), WantErr: "the format f must be a constant string"},
		vt.ExprCase{Name: "bad-input-type", Schema: schemaOf("b", vector.Boolean), Rows: column(true),
			Expr: vector.UnixTimestamp(vector.Col("b"), nil), WantErr: "b must be a string, date or timestamp, not boolean"},
	)
}

func TestDateTrunc(t *testing.T) {
	s := schemaOf("t", vector.Timestamp)
	at := tsMicros("2026-05-14 13:45:56.789123") // a Thursday
	before := tsMicros("1969-12-31 23:59:59.5")
	trunc := func(unit string, want, wantBefore string) vt.ExprCase {
		return vt.ExprCase{Name: unit, Schema: s, Rows: column(at, before), Expr: vector.DateTrunc(vector.Lit(unit), vector.Col("t")),
			Want: []any{tsMicros(want), tsMicros(wantBefore)}, WantType: vector.Timestamp, NullIntolerant: true}
	}
	vt.RunExpr(t,
		trunc("YEAR", "2026-01-01 00:00:00", "1969-01-01 00:00:00"),
		trunc("yy", "2026-01-01 00:00:00", "1969-01-01 00:00:00"),
		trunc("QUARTER", "2026-04-01 00:00:00", "1969-10-01 00:00:00"),
		trunc("month", "2026-05-01 00:00:00", "1969-12-01 00:00:00"),
		trunc("WEEK", "2026-05-11 00:00:00", "1969-12-29 00:00:00"),
		trunc("DAY", "2026-05-14 00:00:00", "1969-12-31 00:00:00"),
		trunc("HOUR", "2026-05-14 13:00:00", "1969-12-31 23:00:00"),
		trunc("MINUTE", "2026-05-14 13:45:00", "1969-12-31 23:59:00"),
		trunc("SECOND", "2026-05-14 13:45:56", "1969-12-31 23:59:59"),
		trunc("MILLISECOND", "2026-05-14 13:45:56.789", "1969-12-31 23:59:59.5"),
		trunc("MICROSECOND", "2026-05-14 13:45:56.789123", "1969-12-31 23:59:59.5"),
		vt.ExprCase{Name: "string-input", Schema: schemaOf("s", vector.String), Rows: column("2026-05-14 13:45:56", "bad"),
			Expr: vector.DateTrunc(vector.Lit("HOUR"), vector.Col("s")), Want: []any{tsMicros("2026-05-14 13:00:00"), nil}, NullIntolerant: true},
		vt.ExprCase{Name: "bad-unit", Schema: s, Rows: column(at), Expr: vector.DateTrunc(vector.Lit("FORTNIGHT"), vector.Col("t")),
			WantErr: "cannot bind date_trunc('FORTNIGHT', t): unknown date_trunc unit 'FORTNIGHT'"},
		vt.ExprCase{Name: "unit-column", Schema: schemaOf("t", vector.Timestamp, "u", vector.String), Rows: []vt.Row{{at, "DAY"}},
			Expr: vector.DateTrunc(vector.Col("u"), vector.Col("t")), WantErr: "the unit u must be a constant string"},
		vt.ExprCase{Name: "bad-type", Schema: schemaOf("x", vector.Int64), Rows: column(1),
			Expr: vector.DateTrunc(vector.Lit("DAY"), vector.Col("x")), WantErr: "x must be a timestamp, not bigint"},
	)
}

// FuzzDatetimePattern compiles arbitrary patterns and parses arbitrary
// strings with them: bind may refuse the pattern; without ANSI evaluation
// may give NULL, and fails only with Spark's cross-version error (text the
// new parser refuses that Spark 2's may read), which ANSI then raises too;
// under ANSI it fails exactly where the legacy mode gives NULL (text that
// does not parse), and otherwise agrees.
func FuzzDatetimePattern(f *testing.F) {
	f.Add("yyyy-MM-dd HH:mm:ss.SSS", "2026-01-01 10:00:00.5")
	f.Add("EEE, dd MMM yyyy hh:mm:ss a z", "Mon, 05 Jan 2026 03:04:05 PM Europe/Paris")
	f.Add("yyyyMMddHHmmssX", "20260101100000+0130")
	f.Add("D 'day' yy VV", "366 day 24 UTC+01:00")
	f.Add("0", "")
	f.Add("X", "0") // the new parser refuses it; the model of Spark 2's is unsure
	f.Fuzz(func(t *testing.T, pattern, input string) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		schema := schemaOf("s", vector.String)
		legacy, err := legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit(pattern))).Bind(schema, mem)
		if err != nil {
			return
		}
		ansi, err := vector.ToTimestamp(vector.Col("s"), vector.Lit(pattern)).Bind(schema, mem)
		if err != nil {
			t.Fatalf("pattern %q binds without ANSI but not with it: %v", pattern, err)
		}
		rec := vt.BuildRecord(mem, schema, column(input))
		defer rec.Release()
		lout, err := legacy.Eval(context.Background(), rec)
		aout, aerr := ansi.Eval(context.Background(), rec)
		if err != nil {
			if !strings.Contains(err.Error(), "INCONSISTENT_BEHAVIOR_CROSS_VERSION") {
				t.Fatalf("to_timestamp(%q, %q) without ANSI: %v", input, pattern, err)
			}
			if aerr == nil || aerr.Error() != err.Error() {
				if aerr == nil {
					aout.Release()
				}
				t.Fatalf("to_timestamp(%q, %q): without ANSI %v, under ANSI %v", input, pattern, err, aerr)
			}
			return
		}
		defer lout.Release()
		switch {
		case aerr != nil && lout.IsValid(0):
			t.Fatalf("to_timestamp(%q, %q): ANSI raises %v where the legacy mode answers %s", input, pattern, aerr, lout.ValueStr(0))
		case aerr != nil:
			if !strings.Contains(aerr.Error(), "does not match the datetime pattern") {
				t.Fatalf("to_timestamp(%q, %q) under ANSI: unexpected error %v", input, pattern, aerr)
			}
		default:
			defer aout.Release()
			if aout.IsValid(0) != lout.IsValid(0) || lout.IsValid(0) && aout.ValueStr(0) != lout.ValueStr(0) {
				t.Fatalf("to_timestamp(%q, %q): ANSI %s, legacy %s", input, pattern, aout.ValueStr(0), lout.ValueStr(0))
			}
		}
	})
}

// TestDateTruncOverflow: truncating a timestamp within a unit of the
// smallest one went below it and wrapped to the year +294247; it is an
// overflow error now, and the largest timestamps still truncate.
func TestDateTruncOverflow(t *testing.T) {
	s := schemaOf("t", vector.Timestamp)
	lowest := arrow.Timestamp(math.MinInt64)
	trunc := func(unit string, rows []vt.Row, want ...any) vt.ExprCase {
		return vt.ExprCase{Name: unit, Schema: s, Rows: rows, Expr: vector.DateTrunc(vector.Lit(unit), vector.Col("t")), Want: want, NullIntolerant: true}
	}
	var cases []vt.ExprCase
	for _, unit := range []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND"} {
		c := trunc(unit, column(lowest), nil)
		c.Name, c.Want, c.NullIntolerant = unit+"-lowest", nil, false
		c.WantErr = "arithmetic overflow: value out of range of timestamp in date_trunc('" + unit + "', t) at row 0 (t=TIMESTAMP '-290308-12-21 19:59:05.224192')"
		cases = append(cases, c)
	}
	cases = append(cases,
		trunc("MICROSECOND", column(lowest), int64(math.MinInt64)),
		trunc("DAY", column(arrow.Timestamp(math.MaxInt64), arrow.Timestamp(-1)), int64(9223372022400000000), int64(-86_400_000_000)),
		trunc("YEAR", column(arrow.Timestamp(math.MaxInt64)), int64(9223371244800000000)),
		// Null rows stay null beside valid ones.
		vt.ExprCase{Name: "null", Schema: s, Rows: column(nil, arrow.Timestamp(0)), Expr: vector.DateTrunc(vector.Lit("DAY"), vector.Col("t")), Want: []any{nil, int64(0)}},
	)
	vt.RunExpr(t, cases...)
}

// TestToTimestampPastLargest: a pattern-parsed time just past the largest
// timestamp wrapped to a negative one; it does not fit, so it is NULL.
// legacyMode sets a function call to Spark's non-ANSI semantics.
func legacyMode(e vector.Expr) vector.Expr {
	e.(*vector.FuncExpr).Mode = vector.ModeLegacy
	return e
}

func TestToTimestampPastLargest(t *testing.T) {
	s := schemaOf("s", vector.String)
	f := vector.Lit("yyyyyy-MM-dd HH:mm:ss.SSSSSS")
	vt.RunExpr(t,
		// Past the largest the value overflows; Spark raises (its
		// ArithmeticException escapes the NULL of non-ANSI parsing), and so
		// does the engine: the legacy parser is not modelled past 9999.
		vt.ExprCase{Name: "to_timestamp", Schema: s,
			Rows: column("294247-01-10 04:00:54.775807", "294247-01-10 04:00:54.775808"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), f)), Want: []any{int64(math.MaxInt64), nil}, NullIntolerant: true},
		vt.ExprCase{Name: "to_timestamp-past", Schema: s, Rows: column("294247-01-10 04:00:55.000000"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), f)), WantErr: "INCONSISTENT_BEHAVIOR_CROSS_VERSION"},
		vt.ExprCase{Name: "offset", Schema: s, Rows: column("294247-01-10 05:00:54.999999 +01:00"),
			Expr: legacyMode(vector.ToTimestamp(vector.Col("s"), vector.Lit("yyyyyy-MM-dd HH:mm:ss.SSSSSS XXX"))), WantErr: "INCONSISTENT_BEHAVIOR_CROSS_VERSION"},
		vt.ExprCase{Name: "unix_timestamp", Schema: s, Rows: column("294247-01-10 04:00:54.999999"),
			Expr: legacyMode(vector.UnixTimestamp(vector.Col("s"), f)), Want: []any{nil}, NullIntolerant: true},
		// Under ANSI (the zero mode) a value that does not parse raises,
		// as Spark's to_timestamp does.
		vt.ExprCase{Name: "ansi", Schema: s, Rows: column("294247-01-10 04:00:54.775808"),
			Expr: vector.ToTimestamp(vector.Col("s"), f), WantErr: "does not match the datetime pattern"},
	)
}

// TestToDateInvalidDate: February 29 of 1970 (the default year) is no
// date: Spark raises under ANSI and answers NULL without it.
func TestToDateInvalidDate(t *testing.T) {
	s := schemaOf("s", vector.String)
	f := vector.Lit("MM-dd")
	vt.RunExpr(t,
		vt.ExprCase{Name: "ansi", Schema: s, Rows: column("02-29"),
			Expr: vector.ToDate(vector.Col("s"), f), WantErr: "not a valid date"},
		vt.ExprCase{Name: "legacy", Schema: s, Rows: column("02-29", "02-28"),
			Expr: legacyMode(vector.ToDate(vector.Col("s"), f)), Want: []any{nil, int64(58)}},
	)
}
