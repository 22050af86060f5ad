package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// The generators of several arguments, json_tuple and stack, become the
// array of structs an Explode node explodes, as inline does:
// json_tuple(j, k1, ..., kn) is one struct {c0, ..., cn-1} of
// json_tuple_item(j, ki) per input row, and stack(n, v1, ..., vk) is n
// structs {col0, ..., colm-1} (m = ceil(k/n)) holding the values row by
// row, NULL where the values run out.

// multiArgGenerator reports whether name is json_tuple or stack.
func multiArgGenerator(name string) bool {
	switch strings.ToLower(name) {
	case "json_tuple", "stack":
		return true
	}
	return false
}

// multiGeneratorInput builds the array and field names of json_tuple or
// stack over the resolved args.
func multiGeneratorInput(f *sql.FuncCall, args []Expr) (genInput, error) {
	name := strings.ToLower(f.Name.Name)
	if name == "json_tuple" {
		return jsonTupleInput(f, args)
	}
	return stackInput(f, args)
}

func jsonTupleInput(f *sql.FuncCall, args []Expr) (genInput, error) {
	var g genInput
	if len(args) < 2 {
		return g, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `json_tuple` requires > 1 parameters but the actual number is %d.", len(args))
	}
	for i, a := range args {
		if dt := vector.Unwrap(a.DataType()); !vector.IsStringLike(dt) && dt.ID() != arrow.NULL {
			return g, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.NON_STRING_TYPE] Cannot resolve %s: argument %d of json_tuple must be a STRING, not %s.", sql.Format(f), i+1, vector.TypeName(dt))
		}
	}
	var parts []Expr
	for k, key := range args[1:] {
		c := fmt.Sprintf("c%d", k)
		item, err := newCall(f.Pos, "json_tuple_item", castTo(args[0], vector.String), castTo(key, vector.String))
		if err != nil {
			return g, err
		}
		parts = append(parts, &Literal{Value: c, Type: vector.String}, item)
		g.fields = append(g.fields, c)
	}
	st, err := newCall(f.Pos, "named_struct", parts...)
	if err != nil {
		return g, err
	}
	if g.array, err = newCall(f.Pos, "array", st); err != nil {
		return g, err
	}
	return g, nil
}

func stackInput(f *sql.FuncCall, args []Expr) (genInput, error) {
	var g genInput
	if len(args) < 2 {
		return g, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `stack` requires > 1 parameters but the actual number is %d.", len(args))
	}
	lit, ok := args[0].(*Literal)
	var n int64
	if ok && lit.Value != nil {
		switch v := lit.Value.(type) {
		case int32:
			n = int64(v)
		case int64:
			n = v
		case int8:
			n = int64(v)
		case int16:
			n = int64(v)
		default:
			ok = false
		}
	}
	if !ok || lit.Value == nil {
		return g, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] Cannot resolve %s: the number of rows of stack must be a constant integer, not %s.", sql.Format(f), sql.Format(f.Args[0]))
	}
	if n <= 0 {
		return g, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] Cannot resolve %s: the number of rows of stack must be positive, got %d.", sql.Format(f), n)
	}
	vals := args[1:]
	if n > int64(len(vals))+1<<16 {
		return g, errorAt(f.Pos, ErrType, "Cannot resolve %s: stack of %d rows from %d values is refused.", sql.Format(f), n, len(vals))
	}
	rows := int(n)
	cols := (len(vals) + rows - 1) / rows
	// Each column's values must have one type; NULLs take it.
	types := make([]arrow.DataType, cols)
	for i, v := range vals {
		c := i % cols
		dt := v.DataType()
		if dt.ID() == arrow.NULL {
			continue
		}
		if types[c] == nil {
			types[c] = dt
			continue
		}
		if !arrow.TypeEqual(vector.Unwrap(types[c]), vector.Unwrap(dt)) {
			return g, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.STACK_COLUMN_DIFF_TYPES] Cannot resolve %s: the data type of the column (%d) do not have the same type: %s (%s) <> %s (%s).", sql.Format(f), c, vector.TypeName(types[c]), sql.Format(f.Args[1+c]), vector.TypeName(dt), sql.Format(f.Args[1+i]))
		}
	}
	for c := range types {
		if types[c] == nil {
			types[c] = vector.Null
		}
		g.fields = append(g.fields, fmt.Sprintf("col%d", c))
	}
	var structs []Expr
	for r := 0; r < rows; r++ {
		var parts []Expr
		for c := 0; c < cols; c++ {
			var v Expr = &Literal{Type: types[c]}
			if i := r*cols + c; i < len(vals) {
				v = castTo(vals[i], types[c])
			}
			parts = append(parts, &Literal{Value: g.fields[c], Type: vector.String}, v)
		}
		st, err := newCall(f.Pos, "named_struct", parts...)
		if err != nil {
			return g, err
		}
		structs = append(structs, st)
	}
	var err error
	if g.array, err = newCall(f.Pos, "array", structs...); err != nil {
		return g, err
	}
	return g, nil
}
