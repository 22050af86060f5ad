package arrowstream

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// DataFrame is a (streaming or static) relation built with Spark's Dataset
// operations. Expressions are strings in the SQL dialect. A DataFrame is
// immutable: every operation returns a new one. Errors are kept and
// reported by Err, Start and Collect, so calls can be chained; the first
// error wins and names the operation that failed.
type DataFrame struct {
	s    *Session
	node plan.Node
	err  error
}

func (s *Session) frame(n plan.Node, err error) *DataFrame {
	return &DataFrame{s: s, node: n, err: err}
}

// ReadStream reads the streaming table name (a registered stream or a
// source declared with CREATE TABLE ... USING).
func (s *Session) ReadStream(name string) *DataFrame {
	n, err := plan.Read(s.Catalog(), name)
	return s.frame(n, wrapOp("readStream", err))
}

// SQLDataFrame analyzes one SELECT statement of the SQL dialect against
// the session's catalog (plan.AnalyzeSQL) into a DataFrame, Spark's
// spark.sql("SELECT ...") for queries: a streaming query (FROM STREAM t)
// is started with WriteStream like any other DataFrame. An analysis error
// is kept and reported as for every DataFrame.
func (s *Session) SQLDataFrame(text string) *DataFrame {
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), s.confCopy())
	if err != nil {
		return s.frame(nil, wrapOp("sql", err))
	}
	n, err := plan.AnalyzeSQLWith(text, s.Catalog(), opts)
	return s.frame(n, wrapOp("sql", err))
}

// Table reads the static (batch) table name: a registered table or a sink
// table.
func (s *Session) Table(name string) *DataFrame {
	n, err := plan.ReadStatic(s.Catalog(), name)
	return s.frame(n, wrapOp("table", err))
}

func wrapOp(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}

// then applies a builder step unless an earlier one failed. The step
// builds under the session's settings at the time of the call (ANSI mode,
// time zone, user functions), as Spark analyzes a DataFrame's operation
// when it is made.
func (df *DataFrame) then(op string, f func(plan.Builder, plan.Node) (plan.Node, error)) *DataFrame {
	if df.err != nil {
		return df
	}
	bd, err := df.s.builder()
	if err != nil {
		return df.s.frame(nil, wrapOp(op, err))
	}
	n, err := f(bd, df.node)
	return df.s.frame(n, wrapOp(op, err))
}

// builder returns the plan builder of the session's current settings.
func (s *Session) builder() (plan.Builder, error) {
	opts, err := plan.OptionsFromConf(plan.DefaultOptions(), s.confCopy())
	if err != nil {
		return plan.Builder{}, err
	}
	return plan.NewBuilder(opts, sessionCatalog{s}), nil
}

// Err returns the first error of the chain that built df.
func (df *DataFrame) Err() error { return df.err }

// Plan returns df's logical plan (nil after an error).
func (df *DataFrame) Plan() plan.Node { return df.node }

// Schema returns df's schema (nil after an error).
func (df *DataFrame) Schema() *arrow.Schema {
	if df.node == nil {
		return nil
	}
	return df.node.Schema()
}

// IsStreaming reports whether df reads a stream.
func (df *DataFrame) IsStreaming() bool { return df.node != nil && df.node.IsStreaming() }

// Explain renders the analyzed, optimized and physical plans.
func (df *DataFrame) Explain() (string, error) {
	if df.err != nil {
		return "", df.err
	}
	opt, err := plan.Optimize(df.node)
	if err != nil {
		return "", err
	}
	return "== Analyzed Logical Plan ==\n" + plan.Explain(df.node) + "\n== Optimized Logical Plan ==\n" + plan.Explain(opt) +
		"\n== Physical Plan ==\n" + plan.PhysicalPlan(opt), nil
}

// Select computes the given items ("expr [AS name]", "*").
func (df *DataFrame) Select(items ...string) *DataFrame {
	return df.then("select", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.Select(n, items...) })
}

// Filter keeps the rows where cond is true (also Where).
func (df *DataFrame) Filter(cond string) *DataFrame {
	return df.then("filter", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.Where(n, cond) })
}

// Where is Filter.
func (df *DataFrame) Where(cond string) *DataFrame { return df.Filter(cond) }

// WithColumn adds or replaces the column name.
func (df *DataFrame) WithColumn(name, expr string) *DataFrame {
	return df.then("withColumn", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.WithColumn(n, name, expr) })
}

// ToDF renames every column, by position.
func (df *DataFrame) ToDF(names ...string) *DataFrame {
	return df.then("toDF", func(_ plan.Builder, n plan.Node) (plan.Node, error) { return plan.ToDF(n, names...) })
}

// WithWatermark declares column the event time, with late data older than
// the watermark (max event time minus delay, e.g. "10 seconds") dropped by
// stateful operators.
func (df *DataFrame) WithWatermark(column, delay string) *DataFrame {
	return df.then("withWatermark", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.WithWatermark(n, column, delay) })
}

// Alias names df for qualified references (t.col).
func (df *DataFrame) Alias(name string) *DataFrame {
	return df.then("alias", func(_ plan.Builder, n plan.Node) (plan.Node, error) { return plan.Alias(n, name), nil })
}

// GroupedData is the result of GroupBy, awaiting Agg.
type GroupedData struct {
	df   *DataFrame
	keys []string
}

// GroupBy groups by key expressions ("expr [AS name]", window(...)).
func (df *DataFrame) GroupBy(keys ...string) *GroupedData { return &GroupedData{df: df, keys: keys} }

// Agg computes aggregates per group ("count(*) AS n", "sum(x)").
func (g *GroupedData) Agg(aggs ...string) *DataFrame {
	return g.df.then("groupBy", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.GroupBy(n, g.keys, aggs) })
}

// Count is Agg("count(*) AS count").
func (g *GroupedData) Count() *DataFrame { return g.Agg("count(*) AS count") }

// DropDuplicates keeps the first row of every combination of cols (all
// columns when none).
func (df *DataFrame) DropDuplicates(cols ...string) *DataFrame {
	return df.then("dropDuplicates", func(_ plan.Builder, n plan.Node) (plan.Node, error) { return plan.DropDuplicates(n, cols, false) })
}

// DropDuplicatesWithinWatermark drops duplicates of cols while the first
// occurrence's event time plus the watermark delay is above the watermark.
func (df *DataFrame) DropDuplicatesWithinWatermark(cols ...string) *DataFrame {
	return df.then("dropDuplicatesWithinWatermark", func(_ plan.Builder, n plan.Node) (plan.Node, error) { return plan.DropDuplicates(n, cols, true) })
}

// Join joins df with right on a condition; joinType is Spark's ("inner",
// "left_outer", "right_outer", "full_outer", "left_semi", "left_anti",
// "cross").
func (df *DataFrame) Join(right *DataFrame, on, joinType string) *DataFrame {
	if right.err != nil {
		return df.s.frame(nil, wrapOp("join", right.err))
	}
	return df.then("join", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.JoinOn(n, right.node, on, joinType) })
}

// JoinUsing joins on equality of the named columns of both sides.
func (df *DataFrame) JoinUsing(right *DataFrame, cols []string, joinType string) *DataFrame {
	if right.err != nil {
		return df.s.frame(nil, wrapOp("join", right.err))
	}
	return df.then("join", func(bd plan.Builder, n plan.Node) (plan.Node, error) {
		return bd.JoinUsing(n, right.node, cols, joinType)
	})
}

// Union appends the rows of others (UNION ALL, by position).
func (df *DataFrame) Union(others ...*DataFrame) *DataFrame {
	return df.then("union", func(bd plan.Builder, n plan.Node) (plan.Node, error) {
		inputs := []plan.Node{n}
		for _, o := range others {
			if o.err != nil {
				return nil, o.err
			}
			inputs = append(inputs, o.node)
		}
		return bd.UnionAll(inputs...)
	})
}

// Limit keeps the first n rows.
func (df *DataFrame) Limit(n int64) *DataFrame {
	return df.then("limit", func(_ plan.Builder, in plan.Node) (plan.Node, error) { return plan.WithLimit(in, n) })
}

// OrderBy sorts by items ("expr [ASC|DESC] [NULLS FIRST|LAST]").
func (df *DataFrame) OrderBy(items ...string) *DataFrame {
	return df.then("orderBy", func(bd plan.Builder, n plan.Node) (plan.Node, error) { return bd.OrderBy(n, items...) })
}

// Collect runs a static DataFrame as a batch query and returns its records
// (owned by the caller).
func (df *DataFrame) Collect(ctx context.Context) ([]arrow.Record, error) {
	if df.err != nil {
		return nil, df.err
	}
	op, err := plan.Execute(ctx, df.s.mem, df.node, nil)
	if err != nil {
		return nil, err
	}
	defer op.Close()
	return vector.Drain(ctx, op)
}
