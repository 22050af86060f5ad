package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowstream/arrowstream/sql"
)

// DefaultMaxPlanExprs bounds the expressions one analysis resolves. It is
// larger than sql.DefaultMaxExprNodes because CTEs and views are resolved
// once per reference, so a short statement can expand; the bound stops an
// exponential expansion.
const DefaultMaxPlanExprs = 1_000_000

// ErrPlanTooLarge is wrapped by the error of an analysis that resolves more
// than its maximum number of expressions.
var ErrPlanTooLarge = errors.New("plan too large")

// budget is what one analysis may spend: it checks the context at bounded
// intervals (every checkEvery expressions) and counts expressions against
// a maximum. A nil *budget (the DataFrame builders) checks nothing.
type budget struct {
	// legacy: the session runs with spark.sql.ansi.enabled=false, so
	// coercions follow Spark 3's TypeCoercion rather than
	// AnsiTypeCoercion where they differ.
	legacy bool
	// switches are the session's spark.sql.legacy.* parser and analyzer
	// settings.
	switches LegacySwitches
	ctx      context.Context
	n        int
	max      int
	fail     error

	// funcs are the session's user functions (nil: none), which calls
	// resolve anywhere in the statement.
	funcs FunctionCatalog

	// ntz: spark.sql.timestampType=TIMESTAMP_NTZ (timestamp_type.go).
	ntz bool
}

const checkEvery = 256

func newBudget(ctx context.Context, max int) *budget {
	if ctx == nil {
		ctx = context.Background()
	}
	if max == 0 {
		max = DefaultMaxPlanExprs
	}
	return &budget{ctx: ctx, max: max}
}

// setOptions records the session settings analysis reads.
func (b *budget) setOptions(o Options) {
	b.legacy = !o.ANSI
	b.switches = o.Legacy
	b.ntz = o.TimestampNTZ
}

// legacySwitches returns the session's legacy switches (none for a nil
// budget: the DataFrame builders).
func (b *budget) legacySwitches() LegacySwitches {
	if b == nil {
		return LegacySwitches{}
	}
	return b.switches
}

// step accounts for one resolved expression.
func (b *budget) step() error {
	if b == nil {
		return nil
	}
	if b.fail != nil {
		return b.fail
	}
	b.n++
	if b.max > 0 && b.n > b.max {
		b.fail = fmt.Errorf("plan: the statement expands to more than %d expressions (the limit, AnalyzeOptions.MaxPlanExprs): %w", b.max, ErrPlanTooLarge)
		return b.fail
	}
	if b.n%checkEvery == 0 {
		if err := b.ctx.Err(); err != nil {
			b.fail = fmt.Errorf("plan: analysis stopped after %d expressions: %w", b.n, err)
			return b.fail
		}
	}
	return nil
}

// AnalyzeOptions bound one analysis.
type AnalyzeOptions struct {
	// MaxPlanExprs bounds the expressions resolved, counting a CTE or view
	// once per reference (0: DefaultMaxPlanExprs; negative: no limit).
	MaxPlanExprs int
	// Session, when not nil, are the session's settings (ANSI mode, time
	// zone) recorded in the plan, as AnalyzeWith does; nil is
	// DefaultOptions.
	Session *Options
}

// AnalyzeContext is Analyze honouring ctx (checked every few hundred
// expressions) and the limits of opts.
func AnalyzeContext(ctx context.Context, stmt sql.Statement, cat Catalog, opts AnalyzeOptions) (Statement, error) {
	b := newBudget(ctx, opts.MaxPlanExprs)
	if opts.Session != nil {
		b.setOptions(*opts.Session)
		if opts.Session.TimestampNTZ {
			sessionTimestampTypes(stmt)
		}
	}
	st, err := analyzeStatement(b, stmt, cat)
	if err != nil || opts.Session == nil {
		return st, err
	}
	return stampStatement(st, *opts.Session)
}

// AnalyzeQueryContext is AnalyzeQuery honouring ctx and the default
// limits.
func AnalyzeQueryContext(ctx context.Context, q *sql.Query, cat Catalog) (Node, error) {
	return analyzeQuery(newBudget(ctx, 0), q, cat)
}
