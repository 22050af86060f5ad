package vector

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// The MAP functions: map_from_arrays, map_from_entries, map_concat,
// str_to_map and map_contains_key. Maps are built by gathering keys and
// values with one Take each; duplicate keys are [DUPLICATED_MAP_KEY] and
// NULL keys [NULL_MAP_KEY], Spark's defaults.

func typeMapFromArrays(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	kt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	vt, err := listArg(f, args, 1)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMapKeyType(kt.Elem()); err != nil {
		return nil, nil, err
	}
	return MapOf(kt.Elem(), vt.Elem()), kernMapFromArrays, nil
}

func kernMapFromArrays(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	kv, ok1 := viewList(arrs[0])
	vv, ok2 := viewList(arrs[1])
	if !ok1 || !ok2 {
		return nullList(e, n), nil
	}
	var kidx, vidx []int32
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	for r := 0; r < n; r++ {
		if !kv.valid(r) || !vv.valid(r) {
			nulls++
			offs = append(offs, offs[r])
			continue
		}
		if kv.size(r) != vv.size(r) {
			return nil, e.rowErr(r, fmt.Errorf("[INVALID_PARAMETER_VALUE] map_from_arrays: the key array and the value array should have the same length, got %d and %d: %w", kv.size(r), vv.size(r), ErrInvalidInput))
		}
		valid[r] = true
		for j := 0; j < kv.size(r); j++ {
			if kv.values.IsNull(int(kv.offs[r]) + j) {
				return nil, e.rowErr(r, fmt.Errorf("[NULL_MAP_KEY] Cannot use null as map key: %w", ErrInvalidInput))
			}
			kidx = append(kidx, kv.offs[r]+int32(j))
			vidx = append(vidx, vv.offs[r]+int32(j))
		}
		offs = append(offs, int32(len(kidx)))
	}
	return buildMapParts(e, kv.values, kidx, vv.values, vidx, offs, valid, nulls)
}

// buildMapParts gathers keys and values from separate columns.
func buildMapParts(e *arrayFnEval, keys arrow.Array, kidx []int32, vals arrow.Array, vidx []int32, offs []int32, valid []bool, nulls int) (arrow.Array, error) {
	mt := e.dt.(*arrow.MapType)
	k, err := Take(e.mem, keys, kidx)
	if err != nil {
		return nil, err
	}
	defer k.Release()
	v, err := Take(e.mem, vals, vidx)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	if !arrow.TypeEqual(v.DataType(), mt.ItemType()) {
		v.Release()
		v = array.MakeArrayOfNull(e.mem, mt.ItemType(), k.Len())
	}
	if err := checkDuplicateKeys(e.mem, k, offs); err != nil {
		return nil, err
	}
	return buildMap(e.mem, mt, offs, valid, nulls, k, v), nil
}

func typeMapFromEntries(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	lt, err := listArg(f, args, 0)
	if err != nil {
		return nil, nil, err
	}
	st, ok := lt.Elem().(*arrow.StructType)
	if !ok || st.NumFields() != 2 {
		return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.MAP_FROM_ENTRIES_WRONG_TYPE] map_from_entries needs an ARRAY of STRUCTs of two fields, not %s: %w", TypeName(lt), ErrType)
	}
	if err := checkMapKeyType(st.Field(0).Type); err != nil {
		return nil, nil, err
	}
	return MapOf(st.Field(0).Type, st.Field(1).Type), kernMapFromEntries, nil
}

// kernMapFromEntries: a NULL entry makes the row NULL; a NULL key is an
// error.
func kernMapFromEntries(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, ok := viewList(arrs[0])
	if !ok {
		return nullList(e, n), nil
	}
	st := lv.values.(*array.Struct)
	var idx []int32
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	for r := 0; r < n; r++ {
		ok := lv.valid(r)
		for j := lv.offs[r]; ok && j < lv.offs[r+1]; j++ {
			ok = st.IsValid(int(j))
		}
		if !ok {
			nulls++
			offs = append(offs, int32(len(idx)))
			continue
		}
		valid[r] = true
		for j := lv.offs[r]; j < lv.offs[r+1]; j++ {
			if st.Field(0).IsNull(int(j)) {
				return nil, e.rowErr(r, fmt.Errorf("[NULL_MAP_KEY] Cannot use null as map key: %w", ErrInvalidInput))
			}
			idx = append(idx, j)
		}
		offs = append(offs, int32(len(idx)))
	}
	return buildMapParts(e, st.Field(0), idx, st.Field(1), idx, offs, valid, nulls)
}

func typeMapConcat(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	var mt arrow.DataType
	for i, a := range args {
		t := Unwrap(a.DataType())
		if t.ID() != arrow.MAP {
			return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.MAP_CONCAT_DIFF_TYPES] argument %d of map_concat must be a MAP, not %s: %w", i+1, TypeName(t), ErrType)
		}
		if mt != nil && !arrow.TypeEqual(mt, t) {
			return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.MAP_CONCAT_DIFF_TYPES] the arguments of map_concat should all be of one map type, got %s and %s: %w", TypeName(mt), TypeName(t), ErrType)
		}
		mt = t
	}
	if mt == nil {
		mt = MapOf(String, String)
	}
	return mt, kernMapConcat, nil
}

// kernMapConcat: NULL when any map is NULL; a key in two maps is
// [DUPLICATED_MAP_KEY].
func kernMapConcat(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	mt := e.dt.(*arrow.MapType)
	views := make([]listView, len(arrs))
	keyCols := make([]arrow.Array, len(arrs))
	valCols := make([]arrow.Array, len(arrs))
	base := make([]int32, len(arrs))
	total := int32(0)
	for i, a := range arrs {
		lv, ok := viewList(a)
		if !ok {
			return nullList(e, n), nil
		}
		m := a.(*array.Map)
		views[i], keyCols[i], valCols[i], base[i] = lv, m.Keys(), m.Items(), total
		total += int32(m.Keys().Len())
	}
	var idx []int32
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	for r := 0; r < n; r++ {
		ok := true
		for _, v := range views {
			ok = ok && v.valid(r)
		}
		if !ok {
			nulls++
			offs = append(offs, int32(len(idx)))
			continue
		}
		valid[r] = true
		for k, v := range views {
			for j := v.offs[r]; j < v.offs[r+1]; j++ {
				idx = append(idx, base[k]+j)
			}
		}
		offs = append(offs, int32(len(idx)))
	}
	return buildMapGather(e.mem, mt, keyCols, valCols, idx, offs, valid, nulls)
}

func typeStrToMap(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	for i, a := range args {
		if t := Unwrap(a.DataType()); !IsStringLike(t) && t.ID() != arrow.NULL {
			return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] argument %d of str_to_map must be a STRING, not %s: %w", i+1, TypeName(t), ErrType)
		}
	}
	return MapOf(String, String), kernStrToMap, nil
}

// kernStrToMap is str_to_map(text[, pairDelim[, keyValueDelim]]): the
// delimiters are regular expressions in Spark; literal delimiters (the
// usual ',' and ':') are split literally here and others refused.
func kernStrToMap(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	for _, a := range arrs {
		if a.DataType().ID() == arrow.NULL {
			return nullList(e, n), nil
		}
	}
	text := arrs[0].(*array.String)
	delim := func(i int, def string, r int) (string, bool) {
		if i >= len(arrs) {
			return def, true
		}
		s := arrs[i].(*array.String)
		if s.IsNull(r) {
			return "", false
		}
		return s.Value(r), true
	}
	kb := array.NewStringBuilder(e.mem)
	defer kb.Release()
	vb := array.NewStringBuilder(e.mem)
	defer vb.Release()
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	for r := 0; r < n; r++ {
		pd, ok1 := delim(1, ",", r)
		kd, ok2 := delim(2, ":", r)
		if text.IsNull(r) || !ok1 || !ok2 {
			nulls++
			offs = append(offs, offs[r])
			continue
		}
		if strings.ContainsAny(pd+kd, `\.[]{}()*+?^$|`) {
			return nil, e.rowErr(r, fmt.Errorf("str_to_map with the regular-expression delimiters %q, %q is not supported: %w", pd, kd, ErrInvalidInput))
		}
		valid[r] = true
		for _, pair := range splitAll(text.Value(r), pd) {
			parts := strings.SplitN(pair, kd, 2)
			if kd == "" {
				parts = []string{pair}
			}
			kb.Append(parts[0])
			if len(parts) == 2 {
				vb.Append(parts[1])
			} else {
				vb.AppendNull()
			}
		}
		offs = append(offs, int32(kb.Len()))
	}
	keys := kb.NewArray()
	defer keys.Release()
	vals := vb.NewArray()
	defer vals.Release()
	// Spark keeps the last value of a repeated key here only under
	// LAST_WIN; its default policy raises.
	if err := checkDuplicateKeys(e.mem, keys, offs); err != nil {
		return nil, err
	}
	return buildMap(e.mem, e.dt.(*arrow.MapType), offs, valid, nulls, keys, vals), nil
}

// splitAll splits s at sep as Java's String.split with a literal pattern
// and limit -1 (an empty separator splits every character).
func splitAll(s, sep string) []string {
	if sep == "" {
		var out []string
		for _, r := range s {
			out = append(out, string(r))
		}
		if len(out) == 0 {
			return []string{""}
		}
		return out
	}
	return strings.Split(s, sep)
}

func typeMapContainsKey(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	mt, ok := Unwrap(args[0].DataType()).(*arrow.MapType)
	if !ok {
		return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES] map_contains_key needs a MAP, not %s: %w", TypeName(args[0].DataType()), ErrType)
	}
	if kt := Unwrap(args[1].DataType()); !arrow.TypeEqual(kt, mt.KeyType()) {
		return nil, nil, fmt.Errorf("[DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES] the key of map_contains_key must be of the map's key type %s, not %s: %w", TypeName(mt.KeyType()), TypeName(kt), ErrType)
	}
	return Boolean, kernMapContainsKey, nil
}

func kernMapContainsKey(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	lv, _ := viewList(arrs[0])
	idx := make([]int32, n)
	if err := mapLookup(e.mem, lv, arrs[1], idx); err != nil {
		return nil, err
	}
	b := array.NewBooleanBuilder(e.mem)
	defer b.Release()
	for r := 0; r < n; r++ {
		if !lv.valid(r) || arrs[1].IsNull(r) {
			b.AppendNull()
			continue
		}
		b.Append(idx[r] >= 0)
	}
	return b.NewArray(), nil
}
