package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Project computes one output column per named expression (SQL's SELECT
// list). A bare column reference costs nothing: its evaluator returns the
// input column retained, so the output shares its buffers.
type Project struct {
	mem    memory.Allocator
	input  Operator
	sel    selectingInput // input as a Filter that can hand out selections
	plans  []projPlan     // how each expression is computed from a selection
	exprs  []NamedExpr
	evs    []Evaluator
	schema *arrow.Schema
	err    error
	closed bool
}

// bareColumn is implemented by evaluators that read one top-level input
// column unchanged (ColumnRef, ColumnAt).
type bareColumn interface {
	Column() (int, bool)
}

// NewProject returns a Project of input computing exprs. The output schema
// has the expressions' names and evaluator types, every field nullable; a
// bare column keeps its input field's metadata (the watermark marker, for
// instance). On success the Project owns input.
func NewProject(mem memory.Allocator, input Operator, exprs []NamedExpr) (*Project, error) {
	in := input.Schema()
	evs := make([]Evaluator, len(exprs))
	fields := make([]arrow.Field, len(exprs))
	for i, ne := range exprs {
		if ne.Expr == nil {
			return nil, fmt.Errorf("vector: project: expression %d (%s) is nil", i, ne.Name)
		}
		ev, err := ne.Expr.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
		fields[i] = arrow.Field{Name: ne.Name, Type: ev.DataType(), Nullable: true}
		if cr, ok := ev.(bareColumn); ok {
			if col, top := cr.Column(); top {
				fields[i].Metadata = in.Field(col).Metadata
			}
		}
	}
	p := &Project{mem: mem, input: input, exprs: exprs, evs: evs, schema: arrow.NewSchema(fields, nil)}
	if si, ok := input.(selectingInput); ok {
		// Over a Filter, take its selection and gather only what the
		// projection needs, fusing simple arithmetic into the gather.
		p.sel = si
		p.plans = planSelection(in, mem, exprs, evs)
	}
	return p, nil
}

// Schema implements Operator.
func (p *Project) Schema() *arrow.Schema { return p.schema }

// Next implements Operator.
func (p *Project) Next(ctx context.Context) (arrow.Record, error) {
	if p.err != nil {
		return nil, p.err
	}
	if p.sel != nil {
		rec, sel, err := p.sel.nextSelected(ctx)
		if err != nil {
			p.err = err
			return nil, err
		}
		defer rec.Release()
		var out arrow.Record
		if sel == nil {
			out, err = projectRecord(ctx, p.schema, p.exprs, p.evs, rec)
		} else {
			out, err = p.projectSelected(ctx, rec, sel)
		}
		if err != nil {
			p.err = err
			return nil, err
		}
		return out, nil
	}
	rec, err := p.input.Next(ctx)
	for err == nil && rec.NumRows() == 0 {
		// An empty batch (possibly without buffers) projects to nothing.
		rec.Release()
		rec, err = p.input.Next(ctx)
	}
	if err != nil {
		p.err = err
		return nil, err
	}
	defer rec.Release()
	out, err := projectRecord(ctx, p.schema, p.exprs, p.evs, rec)
	if err != nil {
		p.err = err
		return nil, err
	}
	return out, nil
}

// projectRecord evaluates evs over rec (borrowed) into a record of schema.
func projectRecord(ctx context.Context, schema *arrow.Schema, exprs []NamedExpr, evs []Evaluator, rec arrow.Record) (arrow.Record, error) {
	cols, err := evalAll(ctx, evs, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(cols)
	// A misbehaving evaluator must surface as an error, not as the panic
	// array.NewRecord raises on a length or type mismatch.
	for i, c := range cols {
		if c.Len() != int(rec.NumRows()) || !TypesEqual(c.DataType(), schema.Field(i).Type) {
			return nil, fmt.Errorf("vector: project: %s returned %d values of %s for %d rows of %s",
				exprs[i].Expr, c.Len(), TypeName(c.DataType()), rec.NumRows(), TypeName(schema.Field(i).Type))
		}
	}
	return array.NewRecord(schema, cols, rec.NumRows()), nil
}

// Rerun implements Rerunner: the bound expressions are kept, the run's end
// or error is forgotten, and the input reruns.
func (p *Project) Rerun() error {
	if p.closed {
		return fmt.Errorf("vector: project: %w", ErrCannotRerun)
	}
	p.err = nil
	return Rerun(p.input)
}

// Close implements Operator; it closes the input.
func (p *Project) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.err == nil {
		p.err = errOpClosed
	}
	return p.input.Close()
}
