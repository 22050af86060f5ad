package difftest

import (
	"context"
	"strings"
)

// ReduceMismatch shrinks the tables of an engine-oracle mismatch: it
// removes rows one at a time (keeping the batch each remaining row is in)
// as long as the same oracle still fails on the same queries, and returns
// the reduced mismatch with freshly computed answers. Queries are not
// rewritten. A mismatch of another oracle (DuckDB) is returned as it is.
func ReduceMismatch(ctx context.Context, m *Mismatch, o Options) *Mismatch {
	if _, ok := refuters[m.Oracle]; !ok {
		return m
	}
	tables := make([]*Table, len(m.Tables))
	for i, t := range m.Tables {
		tables[i] = t.copy()
	}
	best, ok := recheck(ctx, m, tables)
	if !ok {
		return m // not reproducible alone (should not happen): keep the original
	}
	for changed := true; changed; {
		changed = false
		for ti := range tables {
			for ri := len(tables[ti].Rows) - 1; ri >= 0; ri-- {
				if ctx.Err() != nil {
					return best
				}
				trial := append([]*Table(nil), tables...)
				trial[ti] = tables[ti].withoutRow(ri)
				if r, ok := recheck(ctx, m, trial); ok {
					tables, best, changed = trial, r, true
				}
			}
		}
	}
	return best
}

func (t *Table) copy() *Table {
	c := *t
	c.Rows = append([][]Value(nil), t.Rows...)
	c.Batches = append([]int(nil), t.Batches...)
	return &c
}

// withoutRow returns a copy of t without row i.
func (t *Table) withoutRow(i int) *Table {
	c := t.copy()
	c.Rows = append(c.Rows[:i:i], t.Rows[i+1:]...)
	start := 0
	for b, n := range c.Batches {
		if i < start+n {
			c.Batches[b]--
			if c.Batches[b] == 0 {
				c.Batches = append(c.Batches[:b], c.Batches[b+1:]...)
			}
			break
		}
		start += n
	}
	return c
}

// refuters recompute a mismatch's two sides on other tables; ok is false
// when they agree (or an error makes the check void).
var refuters = map[string]func(ctx context.Context, e *Engine, m *Mismatch) (want, got Result, failed bool){
	OracleOptimizer: func(ctx context.Context, e *Engine, m *Mismatch) (Result, Result, bool) {
		raw, opt := e.Run(ctx, m.Query, false), e.Run(ctx, m.Query, true)
		if raw.Err != nil || opt.Err != nil || raw.Panic != "" || opt.Panic != "" {
			return raw, opt, false
		}
		return raw, opt, !sameRows(raw.Rows, opt.Rows, strings.Contains(m.Query, " ORDER BY "))
	},
	OracleTLPWhere:  tlpRefute,
	OracleTLPHaving: tlpRefute,
	OracleTLPOuter:  tlpRefute,
	OracleTLPAgg: func(ctx context.Context, e *Engine, m *Mismatch) (Result, Result, bool) {
		whole, parts := e.Run(ctx, m.Query, true), e.Run(ctx, m.Other, true)
		if whole.Err != nil || parts.Err != nil || whole.Panic != "" || parts.Panic != "" {
			return parts, whole, false
		}
		return parts, whole, !sameRows(whole.Rows, parts.Rows, false)
	},
	OraclePanic: func(ctx context.Context, e *Engine, m *Mismatch) (Result, Result, bool) {
		a, b := e.Run(ctx, m.Query, true), e.Run(ctx, m.Query, false)
		if a.Panic != "" {
			return Result{}, a, true
		}
		return Result{}, b, b.Panic != ""
	},
	OracleLeak: func(ctx context.Context, e *Engine, m *Mismatch) (Result, Result, bool) {
		a, b := e.Run(ctx, m.Query, true), e.Run(ctx, m.Query, false)
		if a.Leak != "" {
			return Result{}, a, true
		}
		return Result{}, b, b.Leak != ""
	},
}

func tlpRefute(ctx context.Context, e *Engine, m *Mismatch) (Result, Result, bool) {
	whole := e.Run(ctx, m.Query, true)
	if whole.Err != nil || whole.Panic != "" {
		return Result{}, whole, false
	}
	var rows []string
	for _, p := range strings.Split(m.Other, ";\n") {
		r := e.Run(ctx, p, true)
		if r.Err != nil || r.Panic != "" {
			return r, whole, false
		}
		rows = append(rows, r.Rows...)
	}
	want := whole.Rows
	if strings.HasPrefix(m.Query, "SELECT DISTINCT ") {
		rows, want = distinct(rows), distinct(want)
	}
	return Result{Rows: rows}, whole, !sameRows(want, rows, false)
}

// recheck runs m's oracle over tables and returns the mismatch on them
// when it still fails.
func recheck(ctx context.Context, m *Mismatch, tables []*Table) (*Mismatch, bool) {
	e, err := NewEngine(tables)
	if err != nil {
		return nil, false
	}
	defer e.Close()
	want, got, failed := refuters[m.Oracle](ctx, e, m)
	if !failed {
		return nil, false
	}
	r := *m
	r.Tables, r.Want, r.Got = tables, want, got
	if !strings.Contains(r.Comment, "reduced") {
		r.Comment += " (tables reduced)"
	}
	return &r, true
}
