package plan

import (
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// topNUpsertKey returns the columns of w's input that key its rows when
// the input is an Update-mode streaming aggregation (its grouping keys):
// each epoch brings, for a key, the row that replaces the key's previous
// one. A top-N over such an input keeps every row of a partition by this
// key and re-ranks it (a retracting top-N, as Flink's retract rank). It
// returns why not ("" when it can): a grouping key the projections drop
// or compute, a filter or other operator between the aggregation and
// the window (a group the filter stops passing would need a retraction
// the aggregation does not send), or PARTITION BY columns outside the
// key (a row moving to another partition would empty a rank, a deletion
// the Update-mode sinks cannot take).
func topNUpsertKey(w *Window) ([]int, string) {
	var chain []Node
	n := w.Input
	var agg *Aggregate
	for agg == nil {
		switch x := n.(type) {
		case *Aggregate:
			if !x.Input.IsStreaming() {
				return nil, "a streaming top-N in Update mode reads an aggregation's rows directly or through projections of its columns, not a batch aggregation"
			}
			if containsSessionWindow(x.Input) {
				return nil, "a streaming top-N in Update mode cannot read a session-window aggregation (a session that grows or merges replaces its row under another key, which would need a retraction)"
			}
			agg = x
		case *Project, *SubqueryAlias:
			chain = append(chain, n)
			n = n.Children()[0]
		default:
			return nil, fmt.Sprintf("a streaming top-N over an Update-mode aggregation reads its rows directly or through projections of its columns, not through %T (a row it stops passing would need a retraction)", n)
		}
	}
	key := make([]int, len(agg.GroupBy))
	for i := range key {
		key[i] = i
	}
	for i := len(chain) - 1; i >= 0; i-- {
		p, ok := chain[i].(*Project)
		if !ok {
			continue
		}
		in := p.Input.Schema()
		for j, c := range key {
			key[j] = -1
			for k, e := range p.Exprs {
				if keyProjection(e.Expr, c, in) {
					key[j] = k
					break
				}
			}
			if key[j] < 0 {
				return nil, fmt.Sprintf("a streaming top-N over an Update-mode aggregation needs the aggregation's grouping key %s among its input columns (it keys the replaced rows)", agg.GroupBy[j].Name)
			}
		}
	}
	for _, p := range w.PartitionBy {
		c, ok := p.(*ColumnRef)
		if !ok {
			return nil, "a streaming top-N partitions by columns only, not by " + p.String()
		}
		if !slices.Contains(key, c.Index) {
			return nil, fmt.Sprintf("a streaming top-N over an Update-mode aggregation partitions by grouping keys of the aggregation only, not by %s (a row moving to another partition would empty a rank, a deletion Update-mode sinks cannot take)", w.Input.Schema().Field(c.Index).Name)
		}
	}
	return key, ""
}

// keyProjection reports whether e carries key column c one to one: the
// column itself, or the start or end of a time window column (a
// tumbling or sliding window has one length, so either bound determines
// it).
func keyProjection(e Expr, c int, in *arrow.Schema) bool {
	if r, ok := e.(*ColumnRef); ok {
		return r.Index == c
	}
	g, ok := e.(*GetField)
	if !ok {
		return false
	}
	r, ok := g.X.(*ColumnRef)
	return ok && r.Index == c && arrow.TypeEqual(in.Field(c).Type, vector.WindowType)
}

func containsSessionWindow(n Node) bool {
	if _, ok := n.(*SessionWindow); ok {
		return true
	}
	for _, k := range n.Children() {
		if containsSessionWindow(k) {
			return true
		}
	}
	return false
}
