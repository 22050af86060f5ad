package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Element access: a[i] (0-based), get(a, i) (0-based, NULL out of range),
// element_at(a, i) and try_element_at (1-based, negative from the end),
// and the same on maps by key; size/cardinality/array_size; map_keys,
// map_values and map_entries, which reuse the map's buffers.

// accessKind is how an index counts and what an index out of range does.
type accessKind uint8

const (
	accessSubscript    accessKind = iota // a[i]: 0-based, [INVALID_ARRAY_INDEX] under ANSI
	accessGet                            // get(a, i): 0-based, NULL
	accessElementAt                      // element_at: 1-based, [INVALID_ARRAY_INDEX_IN_ELEMENT_AT] under ANSI
	accessTryElementAt                   // try_element_at: 1-based, NULL
)

var accessNames = [...]string{"subscript", "get", "element_at", "try_element_at"}

// Subscript is x[i]: the element of an ARRAY at 0-based i or the value of
// a MAP at key i.
func Subscript(x, i Expr) Expr { return accessExpr(accessSubscript, x, i) }

func accessExpr(kind accessKind, x, i Expr) Expr {
	f := &FuncExpr{Name: accessNames[kind], Args: []Expr{x, i}}
	f.bind = func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		return bindAccess(f, in, mem, args, kind)
	}
	return f
}

func bindAccess(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator, kind accessKind) (Evaluator, error) {
	ev := &accessEval{x: args[0], i: args[1], kind: kind, mode: f.Mode, mem: mem, expr: f.String()}
	switch t := Unwrap(args[0].DataType()).(type) {
	case *arrow.ListType:
		if it := Unwrap(args[1].DataType()); !IsIntegral(it) && it.ID() != arrow.NULL {
			return nil, fmt.Errorf("%s: the index must be an integer, not %s: %w", f.Name, TypeName(it), ErrType)
		}
		ev.dt = t.Elem()
	case *arrow.MapType:
		if kt, it := t.KeyType(), Unwrap(args[1].DataType()); !arrow.TypeEqual(kt, it) && it.ID() != arrow.NULL {
			return nil, fmt.Errorf("%s: the key must be of the map's key type %s, not %s: %w", f.Name, TypeName(kt), TypeName(it), ErrType)
		}
		ev.dt = t.ItemType()
		ev.isMap = true
	case *arrow.NullType:
		ev.dt = Null
	default:
		return nil, fmt.Errorf("%s needs an array or a map, not %s: %w", f.Name, TypeName(t), ErrType)
	}
	return fnFoldConstant(f, in, mem, ev, args...)
}

type accessEval struct {
	x, i  Evaluator
	kind  accessKind
	mode  EvalMode
	isMap bool
	dt    arrow.DataType
	mem   memory.Allocator
	expr  string
}

func (e *accessEval) DataType() arrow.DataType { return e.dt }

func (e *accessEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := evalPlain(ctx, e.mem, []Evaluator{e.x, e.i}, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	n := int(rec.NumRows())
	lv, ok := viewList(arrs[0])
	if !ok {
		return array.MakeArrayOfNull(e.mem, e.dt, n), nil
	}
	idx := make([]int32, n)
	if e.isMap {
		if err := mapLookup(e.mem, lv, arrs[1], idx); err != nil {
			return nil, err
		}
		if e.mode == ModeANSI && (e.kind == accessSubscript || e.kind == accessElementAt) {
			for r, j := range idx {
				if j < 0 && lv.valid(r) && arrs[1].IsValid(r) {
					return nil, &EvalError{Expr: e.expr, Row: r, Err: fmt.Errorf("[MAP_KEY_DOES_NOT_EXIST] Key %s does not exist. To return NULL instead, use `try_element_at`. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error: %w", sparkLiteral(ValueAt(arrs[1], r), arrs[1].DataType()), ErrInvalidInput)}
				}
			}
		}
		return Take(e.mem, arrs[0].(*array.Map).Items(), idx)
	}
	ints := intReader(arrs[1])
	for r := 0; r < n; r++ {
		idx[r] = -1
		if !lv.valid(r) || arrs[1].IsNull(r) {
			continue
		}
		k := ints(r)
		size := int64(lv.size(r))
		pos := int64(-1)
		switch e.kind {
		case accessSubscript, accessGet:
			if k >= 0 && k < size {
				pos = k
			}
		default:
			switch {
			case k == 0:
				// Index 0 is an error even for try_element_at, as in
				// Spark: it is a misuse of the function, not a miss.
				return nil, &EvalError{Expr: e.expr, Row: r, Err: fmt.Errorf("%w: %w", ErrInvalidIndex, ErrInvalidInput)}
			case k > 0 && k <= size:
				pos = k - 1
			case k < 0 && -k <= size:
				pos = size + k
			}
		}
		if pos < 0 {
			if e.mode == ModeANSI && e.kind == accessSubscript {
				return nil, &EvalError{Expr: e.expr, Row: r, Err: fmt.Errorf("[INVALID_ARRAY_INDEX] The index %d is out of bounds. The array has %d elements. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error: %w", k, size, ErrInvalidInput)}
			}
			if e.mode == ModeANSI && e.kind == accessElementAt {
				return nil, &EvalError{Expr: e.expr, Row: r, Err: fmt.Errorf("[INVALID_ARRAY_INDEX_IN_ELEMENT_AT] The index %d is out of bounds. The array has %d elements. To return NULL instead, use `try_element_at`. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error: %w", k, size, ErrInvalidInput)}
			}
			continue
		}
		idx[r] = lv.offs[r] + int32(pos)
	}
	return Take(e.mem, lv.values, idx)
}

// mapLookup sets idx[r] to the entry of row r's map whose key equals
// keys[r], or -1.
func mapLookup(mem memory.Allocator, lv listView, keys arrow.Array, idx []int32) error {
	m := lv.arr.(*array.Map)
	mk, err := newElemKeys(mem, m.Keys().DataType())
	if err != nil {
		return err
	}
	if err := mk.encode(m.Keys()); err != nil {
		return err
	}
	nk, err := newElemKeys(mem, m.Keys().DataType())
	if err != nil {
		return err
	}
	if keys.DataType().ID() == arrow.NULL {
		for r := range idx {
			idx[r] = -1
		}
		return nil
	}
	if err := nk.encode(keys); err != nil {
		return err
	}
	for r := range idx {
		idx[r] = -1
		if !lv.valid(r) || keys.IsNull(r) {
			continue
		}
		for j := lv.offs[r]; j < lv.offs[r+1]; j++ {
			if mk.equal(int(j), nk, r) {
				idx[r] = j
				break
			}
		}
	}
	return nil
}

// intReader reads an integer column of any width as int64.
func intReader(a arrow.Array) func(i int) int64 {
	switch x := a.(type) {
	case *array.Int8:
		return func(i int) int64 { return int64(x.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(x.Value(i)) }
	case *array.Int32:
		return func(i int) int64 { return int64(x.Value(i)) }
	case *array.Int64:
		return x.Value
	}
	return func(int) int64 { return 0 }
}

// Size is size(x) (also cardinality; array_size with arrayOnly): the
// number of elements of an ARRAY or entries of a MAP. NULL gives -1
// without ANSI (spark.sql.legacy.sizeOfNull's default), NULL under ANSI
// and always for array_size.
func Size(name string, x Expr, arrayOnly bool) Expr {
	return &FuncExpr{Name: name, Args: []Expr{x}, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		t := Unwrap(args[0].DataType())
		if t.ID() != arrow.LIST && (arrayOnly || t.ID() != arrow.MAP) && t.ID() != arrow.NULL {
			return nil, fmt.Errorf("%s needs an array%s, not %s: %w", name, map[bool]string{false: " or a map"}[arrayOnly], TypeName(t), ErrType)
		}
		ev := &sizeEval{x: args[0], legacy: !arrayOnly && f.Mode != ModeANSI, mem: mem}
		return fnFoldConstant(f, in, mem, ev, args...)
	}}
}

type sizeEval struct {
	x      Evaluator
	legacy bool
	mem    memory.Allocator
}

func (e *sizeEval) DataType() arrow.DataType { return Int32 }

func (e *sizeEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	a, err := e.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	n := a.Len()
	buf, vals := fnFixedBuf[int32](e.mem, n)
	lv, ok := viewList(a)
	valid := make([]bool, n)
	nulls := 0
	for i := 0; i < n; i++ {
		switch {
		case ok && lv.valid(i):
			vals[i], valid[i] = int32(lv.size(i)), true
		case e.legacy:
			vals[i], valid[i] = -1, true
		default:
			vals[i] = 0
			nulls++
		}
	}
	var vb *memory.Buffer
	if nulls > 0 {
		vb = boolsBitmap(e.mem, valid)
	}
	return fnNewArray(Int32, n, []*memory.Buffer{vb, buf}, nil, nulls), nil
}

// mapPart is map_keys, map_values or map_entries: an ARRAY over the map's
// own child buffers.
func mapPart(name string, part int) funcSpec {
	return funcSpec{1, 1, func(a []Expr) Expr {
		return &FuncExpr{Name: name, Args: a, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
			mt, ok := Unwrap(args[0].DataType()).(*arrow.MapType)
			if !ok {
				return nil, fmt.Errorf("%s needs a map, not %s: %w", name, TypeName(args[0].DataType()), ErrType)
			}
			var dt arrow.DataType
			switch part {
			case 0:
				dt = ListOf(mt.KeyType())
			case 1:
				dt = ListOf(mt.ItemType())
			default:
				dt = ListOf(arrow.StructOf(arrow.Field{Name: "key", Type: mt.KeyType()}, arrow.Field{Name: "value", Type: mt.ItemType(), Nullable: true}))
			}
			ev := &mapPartEval{x: args[0], part: part, dt: dt, mem: mem}
			return fnFoldConstant(f, in, mem, ev, args...)
		}}
	}}
}

type mapPartEval struct {
	x    Evaluator
	part int
	dt   arrow.DataType
	mem  memory.Allocator
}

func (e *mapPartEval) DataType() arrow.DataType { return e.dt }

func (e *mapPartEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	a, err := e.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	d := a.Data()
	entries := d.Children()[0]
	var child arrow.ArrayData
	switch e.part {
	case 0:
		child = entries.Children()[0]
	case 1:
		child = entries.Children()[1]
	default:
		st := e.dt.(*arrow.ListType).Elem()
		sd := array.NewData(st, entries.Len(), entries.Buffers(), entries.Children(), entries.NullN(), entries.Offset())
		defer sd.Release()
		child = sd
	}
	out := array.NewData(e.dt, d.Len(), d.Buffers(), []arrow.ArrayData{child}, d.NullN(), d.Offset())
	defer out.Release()
	return array.MakeFromData(out), nil
}

// posexplodeEntries is the array posexplode explodes: per element a
// struct of its position (from 0) and the element ({pos, col}), or for a
// map {pos, key, value}.
func posexplodeEntries() funcSpec {
	return funcSpec{1, 1, func(a []Expr) Expr {
		return &FuncExpr{Name: "posexplode_entries", Args: a, bind: func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
			fields := []arrow.Field{{Name: "pos", Type: Int32, Nullable: true}}
			switch t := Unwrap(args[0].DataType()).(type) {
			case *arrow.ListType:
				fields = append(fields, arrow.Field{Name: "col", Type: t.Elem(), Nullable: true})
			case *arrow.MapType:
				fields = append(fields, arrow.Field{Name: "key", Type: t.KeyType(), Nullable: true}, arrow.Field{Name: "value", Type: t.ItemType(), Nullable: true})
			default:
				return nil, fmt.Errorf("posexplode needs an array or a map, not %s: %w", TypeName(t), ErrType)
			}
			ev := &arrayFnEval{name: "posexplode_entries", args: args, dt: ListOf(arrow.StructOf(fields...)), mem: mem, mode: f.Mode, expr: f.String(), kern: kernPosEntries}
			return fnFoldConstant(f, in, mem, ev, args...)
		}}
	}}
}

func kernPosEntries(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	lo, hi := lv.offs[0], lv.offs[n]
	pos := make([]int32, 0, hi-lo)
	offs := make([]int32, n+1)
	valid := make([]bool, n)
	nulls := 0
	for r := 0; r < n; r++ {
		for j := lv.offs[r]; j < lv.offs[r+1]; j++ {
			pos = append(pos, j-lv.offs[r])
		}
		offs[r+1] = lv.offs[r+1] - lo
		if valid[r] = lv.valid(r); !valid[r] {
			nulls++
		}
	}
	p := int32Column(e.mem, pos)
	defer p.Release()
	children := []arrow.ArrayData{p.Data()}
	var parts []arrow.Array
	if m, isMap := arrs[0].(*array.Map); isMap {
		parts = []arrow.Array{array.NewSlice(m.Keys(), int64(lo), int64(hi)), array.NewSlice(m.Items(), int64(lo), int64(hi))}
	} else {
		parts = []arrow.Array{array.NewSlice(lv.values, int64(lo), int64(hi))}
	}
	defer releaseArrays(parts)
	for _, x := range parts {
		children = append(children, x.Data())
	}
	st := e.dt.(*arrow.ListType).Elem()
	sd := array.NewData(st, int(hi-lo), []*memory.Buffer{nil}, children, 0, 0)
	defer sd.Release()
	sa := array.MakeFromData(sd)
	defer sa.Release()
	return buildList(e.mem, e.dt, offs, valid, nulls, sa), nil
}
