package plan

import (
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The ARRAY, MAP and STRUCT constructors and accessors that the analyzer
// types itself: their arguments are coerced to one element (key, value)
// type, struct(...) takes its field names from its arguments, and a map
// key is cast to the map's key type.

// callNested resolves the functions of this file; ok is false for others.
func (r *resolver) callNested(f *sql.FuncCall, name string) (e Expr, ok bool, err error) {
	switch name {
	case "array", "map", "struct", "element_at", "try_element_at", "get", "array_contains", "array_position", "array_remove",
		"array_union", "array_intersect", "array_except", "concat", "arrays_zip", "map_concat", "map_contains_key", "array_join":
	default:
		return nil, false, nil
	}
	if name == "struct" {
		e, err := r.structCall(f)
		return e, true, err
	}
	args, err := r.exprs(f.Args)
	if err != nil {
		return nil, true, err
	}
	switch name {
	case "array":
		if args, err = coerceExact(f.Pos, "array()", args); err != nil {
			return nil, true, err
		}
	case "map":
		if len(args)%2 != 0 {
			return nil, true, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `map` requires 2n (n > 0) parameters but the actual number is %d.", len(args))
		}
		var keys, vals []Expr
		for i := 0; i < len(args); i += 2 {
			keys = append(keys, args[i])
			vals = append(vals, args[i+1])
		}
		if keys, err = coerceExact(f.Pos, "map() keys", keys); err != nil {
			return nil, true, err
		}
		if vals, err = coerceExact(f.Pos, "map() values", vals); err != nil {
			return nil, true, err
		}
		for i := range keys {
			args[2*i], args[2*i+1] = keys[i], vals[i]
		}
	case "element_at", "try_element_at", "get":
		if len(args) == 2 {
			if args[1], err = nestedKeyArg(f.Args[1].Position(), args[0], args[1]); err != nil {
				return nil, true, err
			}
		}
	case "array_union", "array_intersect", "array_except", "concat", "map_concat":
		if args, err = coerceNested(f.Pos, name, args); err != nil {
			return nil, true, err
		}
		if name == "concat" {
			args = timestampsAsText(args)
		}
	case "map_contains_key":
		// The count is checked first: map_contains_key() is an arity
		// error of the registry, not an index out of range here.
		if len(args) != 2 {
			break
		}
		if mt, ok := args[0].DataType().(*arrow.MapType); ok && !arrow.TypeEqual(mt.KeyType(), vector.Unwrap(args[1].DataType())) {
			if kt, ok := vector.CommonType(mt.KeyType(), args[1].DataType()); ok {
				args[0], args[1] = castTo(args[0], vector.MapOf(kt, mt.ItemType())), castTo(args[1], kt)
			}
		}
	case "arrays_zip":
		named := make([]Expr, 0, 2*len(args))
		for i, a := range args {
			n := fmt.Sprint(i)
			switch x := f.Args[i].(type) {
			case *sql.ColumnRef:
				n = x.Parts[len(x.Parts)-1].Name
			case *sql.FieldAccess:
				n = x.Field.Name
			}
			named = append(named, &Literal{Value: n, Type: vector.String}, a)
		}
		e, err := newCall(f.Pos, "arrays_zip_named", named...)
		return e, true, err
	case "array_join":
		args = joinArgsAsText(args)
	case "array_contains", "array_position", "array_remove":
		if len(args) == 2 {
			if args[0], args[1], err = elementArgs(f.Pos, name, args[0], args[1]); err != nil {
				return nil, true, err
			}
		}
	}
	e, err = newCall(f.Pos, name, args...)
	return e, true, err
}

// joinArgsAsText casts what array_join takes as strings, as Spark's
// implicit casts do: an array of atomic values (numbers, booleans, dates,
// timestamps, binaries) to an array of their strings, and a separator or
// null replacement of an atomic type to its string. Other types are left
// for the function's own type error.
func joinArgsAsText(args []Expr) []Expr {
	out := slices.Clone(args)
	for i, a := range out {
		t := vector.Unwrap(a.DataType())
		if i == 0 {
			if lt, ok := t.(*arrow.ListType); ok {
				if el := vector.Unwrap(lt.Elem()); !isString(el) && isAtomic(el) {
					out[0] = castTo(a, vector.ListOf(vector.String))
				}
			}
			continue
		}
		if !isString(t) && isAtomic(t) {
			out[i] = castTo(a, vector.String)
		}
	}
	return out
}

// structFieldName is the field name struct(...) gives argument i: a
// column's or field's own name, else col1, col2, ... as Spark.
func structFieldName(e sql.Expr, i int) string {
	switch x := e.(type) {
	case *sql.ColumnRef:
		return x.Parts[len(x.Parts)-1].Name
	case *sql.FieldAccess:
		return x.Field.Name
	}
	return fmt.Sprintf("col%d", i+1)
}

// subscript resolves x[i]: an array element (0-based) or a map value.
func (r *resolver) subscript(s *sql.Subscript) (Expr, error) {
	x, err := r.expr(s.X)
	if err != nil {
		return nil, err
	}
	i, err := r.expr(s.Index)
	if err != nil {
		return nil, err
	}
	switch x.DataType().ID() {
	case arrow.LIST, arrow.MAP, arrow.NULL:
	default:
		return nil, errorAt(s.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %s[%s]: the subscripted value must be an ARRAY or a MAP, not %s.", x, i, vector.TypeName(x.DataType()))
	}
	if i, err = nestedKeyArg(s.Index.Position(), x, i); err != nil {
		return nil, err
	}
	return newCall(s.Pos, "subscript", x, i)
}

// nestedKeyArg casts the index of an array access to an integer (Spark
// casts a string or smaller integer implicitly) or the key of a map
// access to the map's key type.
func nestedKeyArg(pos sql.Pos, x, i Expr) (Expr, error) {
	dt := vector.Unwrap(i.DataType())
	switch t := x.DataType().(type) {
	case *arrow.ListType:
		switch {
		case isNullType(dt):
			return castTo(i, vector.Int32), nil
		case dt.ID() == arrow.INT8 || dt.ID() == arrow.INT16 || isString(dt):
			return castTo(i, vector.Int32), nil
		case vector.IsIntegral(dt):
			return i, nil
		}
		return nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] The index of an array must be an integer, not %s.", vector.TypeName(dt))
	case *arrow.MapType:
		kt := t.KeyType()
		if arrow.TypeEqual(dt, kt) {
			return i, nil
		}
		if c, ok := commonType([]arrow.DataType{dt, kt}); ok && arrow.TypeEqual(c, kt) {
			return castTo(i, kt), nil
		}
		return nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES] The key must be of the map's key type %s, not %s.", vector.TypeName(kt), vector.TypeName(dt))
	}
	return i, nil
}

// elementArgs casts the array and the value of array_contains (and
// friends) to a common element type.
func elementArgs(pos sql.Pos, name string, a, v Expr) (Expr, Expr, error) {
	lt, ok := a.DataType().(*arrow.ListType)
	if !ok {
		if isNullType(a.DataType()) {
			return a, v, nil
		}
		return nil, nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %s: its first argument must be an ARRAY, not %s.", name, vector.TypeName(a.DataType()))
	}
	et, vt := lt.Elem(), vector.Unwrap(v.DataType())
	if isNullType(vt) {
		if name == "array_contains" || name == "array_position" {
			return nil, nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.NULL_TYPE] Null typed values cannot be used as arguments of `%s`.", name)
		}
		return a, castTo(v, et), nil
	}
	if arrow.TypeEqual(et, vt) {
		return a, v, nil
	}
	c, ok := vector.CommonType(et, vt)
	if !ok {
		return nil, nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.ARRAY_FUNCTION_DIFF_TYPES] Input to `%s` should have been ARRAY followed by a value with same element type, but it's [%s, %s].", name, vector.TypeName(a.DataType()), vector.TypeName(vt))
	}
	return castTo(a, vector.ListOf(c)), castTo(v, c), nil
}

// convertNestedType maps MAP<k, v> and STRUCT<name: type, ...>.
func convertNestedType(t *sql.TypeName) (arrow.DataType, error) {
	if t.Name == "MAP" {
		if t.Key == nil || t.Elem == nil {
			return nil, errorAt(t.Pos, ErrType, "MAP needs a key and a value type.")
		}
		k, err := convertType(t.Key)
		if err != nil {
			return nil, err
		}
		if k.ID() == arrow.MAP {
			return nil, errorAt(t.Pos, ErrType, "The key of a MAP cannot be a MAP.")
		}
		v, err := convertType(t.Elem)
		if err != nil {
			return nil, err
		}
		return vector.MapOf(k, v), nil
	}
	fields := make([]arrow.Field, len(t.Fields))
	for i, f := range t.Fields {
		ft, err := convertType(f.Type)
		if err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: f.Name.Name, Type: ft, Nullable: true}
	}
	return arrow.StructOf(fields...), nil
}

// coerceNested casts ARRAY (or MAP) arguments whose element types differ
// to arrays of their common element type, as Spark's implicit casts do for
// concat, array_union and friends. Other argument lists are left alone.
func coerceNested(pos sql.Pos, name string, args []Expr) ([]Expr, error) {
	var elems, keys []arrow.DataType
	for _, a := range args {
		switch t := a.DataType().(type) {
		case *arrow.ListType:
			elems = append(elems, t.Elem())
		case *arrow.MapType:
			keys = append(keys, t.KeyType())
			elems = append(elems, t.ItemType())
		case *arrow.NullType:
		default:
			return args, nil
		}
	}
	if len(keys) > 0 && len(keys) != len(elems) || len(elems) == 0 {
		return args, nil
	}
	et, ok := commonType(elems)
	if !ok {
		return nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve %s: the arrays have no common element type.", name)
	}
	var target arrow.DataType = vector.ListOf(et)
	if len(keys) > 0 {
		kt, ok := commonType(keys)
		if !ok {
			return nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.MAP_CONCAT_DIFF_TYPES] Cannot resolve %s: the maps have no common key type.", name)
		}
		target = vector.MapOf(kt, et)
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		out[i] = castTo(a, target)
	}
	return out, nil
}

// coerceExact casts every expression to the values' common type, numbers
// included (an array holds one element type).
func coerceExact(pos sql.Pos, what string, es []Expr) ([]Expr, error) {
	types := make([]arrow.DataType, len(es))
	for i, e := range es {
		types[i] = e.DataType()
	}
	t, ok := commonType(types)
	if !ok {
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = vector.TypeName(t)
		}
		return nil, errorAt(pos, ErrType, "[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve %s due to data type mismatch: the values have no common type (%s).", what, joinStrings(names))
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = e
		if !isNullType(t) && !arrow.TypeEqual(vector.Unwrap(e.DataType()), t) {
			out[i] = castTo(e, t)
		}
	}
	return out, nil
}

// structCall resolves struct(a, b AS x, s.*): fields named after columns
// and struct fields, aliases, or col1, col2, ...; s.* spreads the fields
// of the struct s.
func (r *resolver) structCall(f *sql.FuncCall) (Expr, error) {
	named := make([]Expr, 0, 2*len(f.Args))
	add := func(name string, e Expr) {
		named = append(named, &Literal{Value: name, Type: vector.String}, e)
	}
	for i, a := range f.Args {
		switch x := a.(type) {
		case *sql.ArgAlias:
			v, err := r.expr(x.X)
			if err != nil {
				return nil, err
			}
			add(x.Name.Name, v)
		case *sql.Star:
			if len(x.Qualifier) == 0 {
				return nil, errorAt(x.Pos, ErrUnsupported, "Invalid usage of '*' in struct().")
			}
			v, err := r.expr(&sql.ColumnRef{Pos: x.Pos, Parts: x.Qualifier})
			if err != nil {
				return nil, err
			}
			st, ok := v.DataType().(*arrow.StructType)
			if !ok {
				return nil, errorAt(x.Pos, ErrType, "[CANNOT_RESOLVE_STAR_EXPAND] Cannot resolve %s.* given input columns: %s is not a struct.", sql.Format(&sql.ColumnRef{Parts: x.Qualifier}), vector.TypeName(v.DataType()))
			}
			for k, fld := range st.Fields() {
				add(fld.Name, &GetField{X: v, Index: k, Name: fld.Name})
			}
		default:
			v, err := r.expr(a)
			if err != nil {
				return nil, err
			}
			add(structFieldName(a, i), v)
		}
	}
	return newCall(f.Pos, "named_struct", named...)
}

// nestedCommon is the common type of two ARRAY, MAP or STRUCT types of the
// same shape: element-, key-, value- or field-wise (struct field names
// from a).
func nestedCommon(a, b arrow.DataType) (arrow.DataType, bool) {
	switch x := a.(type) {
	case *arrow.ListType:
		y, ok := b.(*arrow.ListType)
		if !ok {
			return nil, false
		}
		e, ok := commonType([]arrow.DataType{x.Elem(), y.Elem()})
		if !ok {
			return nil, false
		}
		return vector.ListOf(e), true
	case *arrow.MapType:
		y, ok := b.(*arrow.MapType)
		if !ok {
			return nil, false
		}
		k, ok1 := commonType([]arrow.DataType{x.KeyType(), y.KeyType()})
		v, ok2 := commonType([]arrow.DataType{x.ItemType(), y.ItemType()})
		if !ok1 || !ok2 || isNullType(k) {
			return nil, false
		}
		return vector.MapOf(k, v), true
	case *arrow.StructType:
		y, ok := b.(*arrow.StructType)
		if !ok || x.NumFields() != y.NumFields() {
			return nil, false
		}
		fields := make([]arrow.Field, x.NumFields())
		for i := range fields {
			t, ok := commonType([]arrow.DataType{x.Field(i).Type, y.Field(i).Type})
			if !ok {
				return nil, false
			}
			fields[i] = arrow.Field{Name: x.Field(i).Name, Type: t, Nullable: true}
		}
		return arrow.StructOf(fields...), true
	}
	return nil, false
}

// structStar expands s.* in a select list when s is a struct column (not
// a table): one item per field, as Spark does.
func structStar(sc *scope, st *sql.Star) ([]outItem, bool) {
	r := &resolver{sc: sc, clause: "SELECT"}
	v, err := r.expr(&sql.ColumnRef{Pos: st.Pos, Parts: st.Qualifier})
	if err != nil {
		return nil, false
	}
	t, ok := v.DataType().(*arrow.StructType)
	if !ok {
		return nil, false
	}
	out := make([]outItem, t.NumFields())
	for k, f := range t.Fields() {
		out[k] = outItem{pos: st.Pos, expr: &GetField{X: v, Index: k, Name: f.Name}, name: f.Name}
	}
	return out, true
}
