package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The constructors array(...), map(...), struct(...) and named_struct(...).
// Arguments arrive with one common type (the planner casts them); the
// constructors gather the argument columns into the child of the result
// with one Take, or, for a struct, reuse the columns as its fields.

// evalPlain evaluates evs over rec and decodes dictionaries.
func evalPlain(ctx context.Context, mem memory.Allocator, evs []Evaluator, rec arrow.Record) ([]arrow.Array, error) {
	arrs, err := evalAll(ctx, evs, rec)
	if err != nil {
		return nil, err
	}
	for i, a := range arrs {
		p, err := plainArray(mem, a)
		a.Release()
		arrs[i] = p
		if err != nil {
			arrs[i] = nil
			releaseArrays(arrs)
			return nil, err
		}
	}
	return arrs, nil
}

// ArrayOf is array(args...): one ARRAY per row of the arguments' values.
func ArrayOf(args ...Expr) Expr {
	return &FuncExpr{Name: "array", Args: args, bind: bindArrayOf}
}

func bindArrayOf(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	elem, err := sameType("array", args)
	if err != nil {
		return nil, err
	}
	ev := &arrayOfEval{args: args, dt: ListOf(elem), mem: mem}
	return fnFoldConstant(f, in, mem, ev, args...)
}

// sameType is the one type of every argument (NULL for none).
func sameType(fn string, args []Evaluator) (arrow.DataType, error) {
	var t arrow.DataType = Null
	for _, a := range args {
		at := Unwrap(a.DataType())
		switch {
		case at.ID() == arrow.NULL:
		case t.ID() == arrow.NULL:
			t = at
		case !arrow.TypeEqual(t, at):
			return nil, fmt.Errorf("%s: the arguments have different types %s and %s: %w", fn, TypeName(t), TypeName(at), ErrType)
		}
	}
	return t, nil
}

type arrayOfEval struct {
	args []Evaluator
	dt   arrow.DataType
	mem  memory.Allocator
}

func (e *arrayOfEval) DataType() arrow.DataType { return e.dt }

func (e *arrayOfEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	m := len(e.args)
	elem := e.dt.(*arrow.ListType).Elem()
	arrs, err := evalPlain(ctx, e.mem, e.args, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	for i, a := range arrs {
		if !arrow.TypeEqual(a.DataType(), elem) {
			// An untyped NULL argument of array(1, NULL).
			c := array.MakeArrayOfNull(e.mem, elem, n)
			arrs[i].Release()
			arrs[i] = c
		}
	}
	var child arrow.Array
	if m == 0 {
		child = array.MakeArrayOfNull(e.mem, elem, 0)
	} else if child, err = concatArrays(e.mem, arrs); err != nil {
		return nil, err
	}
	defer child.Release()
	out := newListOut(n)
	out.idx = make([]int32, 0, n*m)
	for i := 0; i < n; i++ {
		for k := 0; k < m; k++ {
			out.idx = append(out.idx, int32(k*n+i))
		}
		out.endRow(true)
	}
	return out.build(e.mem, e.dt, child)
}

// NamedStruct is named_struct(name1, value1, ...): a STRUCT per row whose
// fields are the values, named by the constant string names.
func NamedStruct(args ...Expr) Expr {
	return &FuncExpr{Name: "named_struct", Args: args, bind: bindNamedStruct}
}

func bindNamedStruct(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if len(args)%2 != 0 || len(args) == 0 {
		return nil, fmt.Errorf("[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] named_struct expects a positive even number of arguments, got %d: %w", len(args), ErrType)
	}
	fields := make([]arrow.Field, 0, len(args)/2)
	vals := make([]Evaluator, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		v, ok := fnConstValue(args[i])
		name, isStr := v.(string)
		if !ok || !isStr {
			return nil, fmt.Errorf("[DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING] Only foldable STRING expressions are allowed to appear at odd position, got %s: %w", f.Args[i], ErrType)
		}
		fields = append(fields, arrow.Field{Name: name, Type: Unwrap(args[i+1].DataType()), Nullable: true})
		vals = append(vals, args[i+1])
	}
	ev := &structOfEval{args: vals, dt: arrow.StructOf(fields...), mem: mem}
	return fnFoldConstant(f, in, mem, ev, vals...)
}

type structOfEval struct {
	args []Evaluator
	dt   *arrow.StructType
	mem  memory.Allocator
}

func (e *structOfEval) DataType() arrow.DataType { return e.dt }

func (e *structOfEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := evalPlain(ctx, e.mem, e.args, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	n := int(rec.NumRows())
	children := make([]arrow.ArrayData, len(arrs))
	for i, a := range arrs {
		children[i] = a.Data()
	}
	return fnNewArray(e.dt, n, []*memory.Buffer{nil}, children, 0), nil
}

// MapOfPairs is map(k1, v1, k2, v2, ...): one MAP per row. A NULL key is
// [NULL_MAP_KEY]; a key given twice in a row is [DUPLICATED_MAP_KEY]
// (Spark's default spark.sql.mapKeyDedupPolicy, EXCEPTION).
func MapOfPairs(args ...Expr) Expr {
	return &FuncExpr{Name: "map", Args: args, bind: bindMapOf}
}

func bindMapOf(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if len(args)%2 != 0 {
		return nil, fmt.Errorf("[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] map expects a positive even number of arguments, got %d: %w", len(args), ErrType)
	}
	var keys, vals []Evaluator
	for i := 0; i < len(args); i += 2 {
		keys = append(keys, args[i])
		vals = append(vals, args[i+1])
	}
	kt, err := sameType("map keys", keys)
	if err != nil {
		return nil, err
	}
	vt, err := sameType("map values", vals)
	if err != nil {
		return nil, err
	}
	if err := checkMapKeyType(kt); err != nil {
		return nil, err
	}
	ev := &mapOfEval{keys: keys, vals: vals, dt: MapOf(kt, vt).(*arrow.MapType), mem: mem}
	return fnFoldConstant(f, in, mem, ev, args...)
}

// checkMapKeyType refuses key types that cannot be compared.
func checkMapKeyType(kt arrow.DataType) error {
	if kt.ID() == arrow.MAP {
		return fmt.Errorf("[DATATYPE_MISMATCH.INVALID_MAP_KEY_TYPE] the key of a map cannot be of type %s: %w", TypeName(kt), ErrType)
	}
	return nil
}

type mapOfEval struct {
	keys, vals []Evaluator
	dt         *arrow.MapType
	mem        memory.Allocator
}

func (e *mapOfEval) DataType() arrow.DataType { return e.dt }

func (e *mapOfEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	m := len(e.keys)
	ka, err := evalPlain(ctx, e.mem, e.keys, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(ka)
	va, err := evalPlain(ctx, e.mem, e.vals, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(va)
	for _, k := range ka {
		if k.NullN() > 0 {
			return nil, fmt.Errorf("[NULL_MAP_KEY] Cannot use null as map key: %w", ErrInvalidInput)
		}
	}
	for i, a := range va {
		if !arrow.TypeEqual(a.DataType(), e.dt.ItemType()) {
			c := array.MakeArrayOfNull(e.mem, e.dt.ItemType(), n)
			va[i].Release()
			va[i] = c
		}
	}
	idx := make([]int32, 0, n*m)
	for i := 0; i < n; i++ {
		for k := 0; k < m; k++ {
			idx = append(idx, int32(k*n+i))
		}
	}
	offs := make([]int32, n+1)
	for i := range offs {
		offs[i] = int32(i * m)
	}
	return buildMapGather(e.mem, e.dt, ka, va, idx, offs, nil, 0)
}

// buildMapGather builds a map column whose entries are the concatenation
// of keyCols/valCols gathered at idx, rows cut at offs (valid: row
// validity, nil for all valid). Duplicate keys in a row are an error.
func buildMapGather(mem memory.Allocator, dt *arrow.MapType, keyCols, valCols []arrow.Array, idx, offs []int32, valid []bool, nulls int) (arrow.Array, error) {
	var kc, vc arrow.Array
	var err error
	if len(keyCols) == 0 {
		kc = array.MakeArrayOfNull(mem, dt.KeyType(), 0)
		vc = array.MakeArrayOfNull(mem, dt.ItemType(), 0)
	} else {
		if kc, err = concatArrays(mem, keyCols); err != nil {
			return nil, err
		}
		if vc, err = concatArrays(mem, valCols); err != nil {
			kc.Release()
			return nil, err
		}
	}
	defer kc.Release()
	defer vc.Release()
	keys, err := Take(mem, kc, idx)
	if err != nil {
		return nil, err
	}
	defer keys.Release()
	vals, err := Take(mem, vc, idx)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	if err := checkDuplicateKeys(mem, keys, offs); err != nil {
		return nil, err
	}
	return buildMap(mem, dt, offs, valid, nulls, keys, vals), nil
}

// buildMap assembles a map array from offsets, validity, and keys and
// values (retained).
func buildMap(mem memory.Allocator, dt *arrow.MapType, offs []int32, valid []bool, nulls int, keys, vals arrow.Array) arrow.Array {
	st := dt.Elem().(*arrow.StructType)
	entries := array.NewData(st, keys.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{keys.Data(), vals.Data()}, 0, 0)
	defer entries.Release()
	ea := array.MakeFromData(entries)
	defer ea.Release()
	if valid == nil {
		valid = make([]bool, len(offs)-1)
		for i := range valid {
			valid[i] = true
		}
	}
	return buildList(mem, dt, offs, valid, nulls, ea)
}

// checkDuplicateKeys raises [DUPLICATED_MAP_KEY] when a row of keys (cut
// at offs) holds a key twice.
func checkDuplicateKeys(mem memory.Allocator, keys arrow.Array, offs []int32) error {
	ek, err := newElemKeys(mem, keys.DataType())
	if err != nil {
		return err
	}
	if err := ek.encode(keys); err != nil {
		return err
	}
	set := newElemSet(ek, mem, "map key check")
	defer set.release()
	for r := 0; r+1 < len(offs); r++ {
		if err := set.prepare(context.Background(), int(offs[r+1]-offs[r])); err != nil {
			return err
		}
		for j := offs[r]; j < offs[r+1]; j++ {
			if !set.add(int(j)) {
				return fmt.Errorf("[DUPLICATED_MAP_KEY] Duplicate map key %s was found, please check the input data. If you want to remove the duplicated keys, you can set \"spark.sql.mapKeyDedupPolicy\" to \"LAST_WIN\" so that the key inserted at last takes precedence: %w", FormatValue(ValueAt(keys, int(j)), keys.DataType()), ErrInvalidInput)
			}
		}
	}
	return nil
}
