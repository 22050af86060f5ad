package vector

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ColumnRef references a column of the input by name, and optionally a
// field of a struct column (window.start). Names match exactly first, then
// case-insensitively when that is unambiguous, as Spark's resolver does.
type ColumnRef struct {
	Path []string
}

// Col references column name, then the struct fields in fields, in order.
func Col(name string, fields ...string) *ColumnRef {
	return &ColumnRef{Path: append([]string{name}, fields...)}
}

func (c *ColumnRef) String() string {
	parts := make([]string, len(c.Path))
	for i, p := range c.Path {
		parts[i] = QuoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// QuoteIdent backquotes a name unless it is a plain identifier (a letter
// or underscore, then letters, digits, underscores), doubling backquotes
// inside: how expressions and plans render column names.
func QuoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

// resolveField finds name among fields: exact match, else a unique
// case-insensitive match.
func resolveField(fields []arrow.Field, name string) (int, error) {
	found := -1
	for i, f := range fields {
		if f.Name == name {
			if found >= 0 {
				return -1, fmt.Errorf("column %s is ambiguous", QuoteIdent(name))
			}
			found = i
		}
	}
	if found >= 0 {
		return found, nil
	}
	for i, f := range fields {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1, fmt.Errorf("column %s is ambiguous", QuoteIdent(name))
			}
			found = i
		}
	}
	if found < 0 {
		return -1, fmt.Errorf("%w %s", ErrUnknownColumn, QuoteIdent(name))
	}
	return found, nil
}

// Bind implements Expr.
func (c *ColumnRef) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	if len(c.Path) == 0 {
		return nil, newBindError(c, in, fmt.Errorf("empty column reference"))
	}
	col, err := resolveField(in.Fields(), c.Path[0])
	if err != nil {
		return nil, newBindError(c, in, err)
	}
	dt := in.Field(col).Type
	var path []int
	for _, name := range c.Path[1:] {
		st, ok := dt.(*arrow.StructType)
		if !ok {
			return nil, newBindError(c, in, fmt.Errorf("cannot access field %s of a %s value: %w", QuoteIdent(name), TypeName(dt), ErrType))
		}
		f, err := resolveField(st.Fields(), name)
		if err != nil {
			return nil, newBindError(c, in, fmt.Errorf("struct %s: %w", TypeName(st), err))
		}
		path = append(path, f)
		dt = st.Field(f).Type
	}
	return &columnEval{col: col, path: path, dt: dt, mem: mem}, nil
}

// ColumnAt references the input column at index i; the planner uses it for
// columns it has already resolved.
type ColumnAt struct {
	Index int
	Name  string // for String only
}

func (c *ColumnAt) String() string {
	if c.Name != "" {
		return QuoteIdent(c.Name)
	}
	return fmt.Sprintf("#%d", c.Index)
}

// Bind implements Expr.
func (c *ColumnAt) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	if c.Index < 0 || c.Index >= in.NumFields() {
		return nil, newBindError(c, in, fmt.Errorf("%w: index %d out of %d columns", ErrUnknownColumn, c.Index, in.NumFields()))
	}
	return &columnEval{col: c.Index, dt: in.Field(c.Index).Type, mem: mem}, nil
}

type columnEval struct {
	col  int
	path []int
	dt   arrow.DataType
	mem  memory.Allocator
}

func (c *columnEval) DataType() arrow.DataType { return c.dt }

// Column returns the input column index this evaluator reads when it reads
// a top-level column directly, for operators that can skip evaluation.
func (c *columnEval) Column() (int, bool) { return c.col, len(c.path) == 0 }

func (c *columnEval) Eval(_ context.Context, rec arrow.Record) (arrow.Array, error) {
	arr := rec.Column(c.col)
	if len(c.path) == 0 {
		arr.Retain()
		return arr, nil
	}
	arr.Retain()
	for _, f := range c.path {
		st := arr.(*array.Struct)
		child := st.Field(f)
		next, err := withParentNulls(c.mem, child, st)
		arr.Release()
		if err != nil {
			return nil, err
		}
		arr = next
	}
	return arr, nil
}

// withParentNulls returns child (retained) with the parent's nulls added:
// a field of a null struct is null. The value buffers are shared; only the
// validity bitmap is new.
func withParentNulls(mem memory.Allocator, child arrow.Array, parent arrow.Array) (arrow.Array, error) {
	if parent.NullN() == 0 {
		child.Retain()
		return child, nil
	}
	n := child.Len()
	d := child.Data().(*array.Data)
	off := d.Offset()
	bm := memory.NewResizableBuffer(mem)
	bm.Resize(int(bitutil.BytesForBits(int64(off + n))))
	out := bm.Bytes()
	pb, poff := parent.NullBitmapBytes(), parent.Data().Offset()
	cb := child.NullBitmapBytes()
	nulls := 0
	for i := 0; i < n; i++ {
		valid := bitutil.BitIsSet(pb, poff+i) && (cb == nil || bitutil.BitIsSet(cb, off+i))
		bitutil.SetBitTo(out, off+i, valid)
		if !valid {
			nulls++
		}
	}
	bufs := append([]*memory.Buffer(nil), d.Buffers()...)
	bufs[0] = bm
	data := array.NewData(d.DataType(), n, bufs, d.Children(), nulls, off)
	bm.Release()
	if dict := d.Dictionary(); dict != nil {
		data.SetDictionary(dict)
	}
	defer data.Release()
	return array.MakeFromData(data), nil
}

// newBindError builds a BindError for e against schema in.
func newBindError(e Expr, in *arrow.Schema, err error) *BindError {
	var names []string
	if in != nil {
		names = make([]string, in.NumFields())
		for i, f := range in.Fields() {
			names[i] = f.Name
		}
	}
	return &BindError{Expr: e.String(), Available: names, Err: err}
}
