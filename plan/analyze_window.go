package plan

import (
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// assignWindows finds window(...) and session_window(...) calls in GROUP
// BY and among the select items, adds the WindowAssign or SessionWindow
// node that computes them below the rest of the block, and records each
// call as a reference to the new column (named window or session_window,
// as Spark names it, shadowing an input column of that name).
func assignWindows(cur *scope, s selectSpec, special map[sql.Expr]Expr) (*scope, error) {
	var calls []*sql.FuncCall
	consider := func(e sql.Expr) {
		if f, ok := e.(*sql.FuncCall); ok {
			switch strings.ToLower(f.Name.Name) {
			case "window", "session_window":
				calls = append(calls, f)
			}
		}
	}
	for _, g := range s.groupBy {
		consider(g)
	}
	for _, it := range s.items {
		consider(it.Expr)
	}
	if len(calls) == 0 {
		return cur, nil
	}
	first := sql.Format(calls[0])
	for _, c := range calls[1:] {
		if sql.Format(c) != first {
			return nil, errorAt(c.Pos, ErrUnsupported, "Multiple time/session window expressions would result in a cartesian product of rows, therefore they are currently not supported.")
		}
	}
	f := calls[0]
	name := strings.ToLower(f.Name.Name)
	r := &resolver{funcs: s.b.userFuncs(), sc: cur, clause: name + "()"}
	if len(f.Args) < 2 || name == "window" && len(f.Args) > 4 || name == "session_window" && len(f.Args) > 2 {
		return nil, errorAt(f.Pos, ErrType, "%s() needs a time column and %s, got %d arguments.", name,
			map[bool]string{true: "a gap duration", false: "1 to 3 durations"}[name == "session_window"], len(f.Args))
	}
	t, err := r.expr(f.Args[0])
	if err != nil {
		return nil, err
	}
	if arrow.TypeEqual(t.DataType(), vector.WindowType) {
		// Windowing a window column windows its window_time (end - 1µs).
		if t, err = newCall(f.Pos, "window_time", t); err != nil {
			return nil, err
		}
	}
	if isString(t.DataType()) {
		t = castTo(t, vector.Timestamp)
	}
	if !arrow.TypeEqual(t.DataType(), vector.Timestamp) {
		return nil, errorAt(f.Args[0].Position(), ErrType, "The time column of %s() must be a timestamp, but %s is %s.", name, t, typeOrNil(t))
	}
	var node Node
	if name == "session_window" && !constantDuration(f.Args[1]) {
		// A dynamic gap: an expression over the row (Spark's
		// session_window(ts, gapExpr)).
		gap, err := r.expr(f.Args[1])
		if err != nil {
			return nil, err
		}
		if node, err = NewSessionWindowExpr(cur.node, t, gap, "session_window"); err != nil {
			return nil, errorAt(f.Args[1].Position(), ErrType, "%v", trimSentinel(err))
		}
		return appendWindowScope(cur, node, name, calls, special), nil
	}
	durs := make([]int64, len(f.Args)-1)
	for i, a := range f.Args[1:] {
		if durs[i], err = durationArg(a); err != nil {
			return nil, err
		}
	}
	if name == "session_window" {
		node, err = NewSessionWindow(cur.node, t, durs[0], "session_window")
	} else {
		width := durs[0]
		slide, start := width, int64(0)
		if len(durs) > 1 {
			slide = durs[1]
		}
		if len(durs) > 2 {
			start = durs[2]
		}
		node, err = NewWindowAssign(cur.node, t, width, slide, start, "window")
	}
	if err != nil {
		return nil, errorAt(f.Pos, ErrType, "%v", trimSentinel(err))
	}
	return appendWindowScope(cur, node, name, calls, special), nil
}

// constantDuration reports whether a window duration argument is a
// constant (a string or interval literal).
func constantDuration(a sql.Expr) bool {
	switch a.(type) {
	case *sql.Literal, *sql.IntervalLit:
		return true
	}
	return false
}

// appendWindowScope is the scope over node, which appends the window
// column named name to cur's, with every call recorded as a reference to
// it.
func appendWindowScope(cur *scope, node Node, name string, calls []*sql.FuncCall, special map[sql.Expr]Expr) *scope {
	cols := make([]scopeCol, len(cur.cols), len(cur.cols)+1)
	copy(cols, cur.cols)
	for i, fl := range cur.node.Schema().Fields() {
		if strings.EqualFold(fl.Name, name) {
			cols[i].shadowed = true
		}
	}
	cols = append(cols, scopeCol{})
	ref := ColumnOf(node.Schema(), len(cols)-1)
	for _, c := range calls {
		special[c] = ref
	}
	return &scope{node: node, cols: cols}
}

// durationArg reads a window duration: a string such as '10 seconds' or
// an interval literal, without months.
func durationArg(a sql.Expr) (int64, error) {
	var iv sql.Interval
	var err error
	switch x := a.(type) {
	case *sql.Literal:
		if x.Kind != sql.LitString {
			return 0, errorAt(x.Pos, ErrType, "A window duration must be a string such as '10 seconds' or an interval, not %s.", sql.Format(x))
		}
		iv, err = sql.ParseInterval(x.Value)
	case *sql.IntervalLit:
		iv, err = x.Value()
	default:
		return 0, errorAt(a.Position(), ErrType, "A window duration must be a constant string or interval, not %s.", sql.Format(a))
	}
	if err != nil {
		return 0, errorAt(a.Position(), ErrType, "The window duration %s is invalid: %v.", sql.Format(a), err)
	}
	if iv.Months != 0 {
		return 0, errorAt(a.Position(), ErrType, "Intervals greater than a month is not supported (%s).", sql.Format(a))
	}
	us, err := iv.Fixed()
	if err != nil {
		return 0, errorAt(a.Position(), ErrType, "The window duration %s is invalid: %v.", sql.Format(a), err)
	}
	return us, nil
}

// assignGenerator adds the Explode node for a generator select item
// (explode, posexplode, inline and their _outer forms); a generator of
// several columns (posexplode, explode of a map, inline) becomes that many
// items over the struct the Explode appends.
func assignGenerator(b *budget, cur *scope, items []outItem, special map[sql.Expr]Expr, aggregating bool) (*scope, []outItem, error) {
	var gen *outItem
	at := -1
	for i := range items {
		f, ok := items[i].src.(*sql.FuncCall)
		if !ok {
			continue
		}
		if !isGenerator(f.Name.Name) {
			continue
		}
		if gen != nil {
			return nil, nil, errorAt(f.Pos, ErrUnsupported, "Only one generator allowed per select clause but found 2: %s and %s.", sql.Format(gen.src), sql.Format(f))
		}
		gen, at = &items[i], i
	}
	if gen == nil {
		return cur, items, nil
	}
	f := gen.src.(*sql.FuncCall)
	if aggregating {
		return nil, nil, errorAt(f.Pos, ErrUnsupported, "Generators are not supported when it's nested in expressions or used together with aggregate functions: %s.", sql.Format(f))
	}
	r := &resolver{funcs: b.userFuncs(), sc: cur, clause: "explode()", special: special}
	var g genInput
	if multiArgGenerator(f.Name.Name) {
		args := make([]Expr, len(f.Args))
		for i, a := range f.Args {
			var err error
			if args[i], err = r.expr(a); err != nil {
				return nil, nil, err
			}
		}
		var err error
		if g, err = multiGeneratorInput(f, args); err != nil {
			return nil, nil, err
		}
	} else {
		if len(f.Args) != 1 {
			return nil, nil, errorAt(f.Pos, ErrType, "%s() needs one argument, got %d.", strings.ToLower(f.Name.Name), len(f.Args))
		}
		arg, err := r.expr(f.Args[0])
		if err != nil {
			return nil, nil, err
		}
		if g, err = generatorInput(f, arg); err != nil {
			return nil, nil, err
		}
	}
	name := "col"
	if gen.alias && g.fields == nil {
		name = gen.name
	}
	e, err := NewExplode(cur.node, g.array, name, g.outer)
	if err != nil {
		return nil, nil, errorAt(f.Pos, ErrType, "%v", trimSentinel(err))
	}
	cols := append(append([]scopeCol(nil), cur.cols...), scopeCol{hidden: g.fields != nil})
	col := ColumnOf(e.Schema(), len(cols)-1)
	if g.fields == nil {
		special[f] = col
		return &scope{node: e, cols: cols}, items, nil
	}
	if gen.alias {
		return nil, nil, errorAt(f.Pos, ErrUnsupported, "%s() makes %d columns: name them with AS (a, b, ...) is not supported; use the default names %s.", strings.ToLower(f.Name.Name), len(g.fields), strings.Join(g.fields, ", "))
	}
	st := col.Type.(*arrow.StructType)
	out := append([]outItem(nil), items[:at]...)
	for k, fname := range g.fields {
		out = append(out, outItem{pos: f.Pos, expr: &GetField{X: col, Index: k, Name: st.Field(k).Name}, name: fname})
	}
	out = append(out, items[at+1:]...)
	return &scope{node: e, cols: cols}, out, nil
}

// isGenerator reports whether name is a generator function.
func isGenerator(name string) bool {
	switch strings.ToLower(name) {
	case "explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer":
		return true
	}
	return multiArgGenerator(name)
}

// genInput is what a generator explodes: an array, and for generators of
// several columns the names of the fields of its struct elements.
type genInput struct {
	array  Expr
	fields []string
	outer  bool
}

// generatorInput maps a generator call to the array the Explode node
// explodes: explode of a map explodes its entries, posexplode an array of
// {pos, col} (or {pos, key, value}), inline an array of structs as is.
func generatorInput(f *sql.FuncCall, arg Expr) (genInput, error) {
	name := strings.ToLower(f.Name.Name)
	g := genInput{outer: strings.HasSuffix(name, "_outer")}
	base := strings.TrimSuffix(name, "_outer")
	dt := arg.DataType()
	bad := func(want string) (genInput, error) {
		return g, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %s: the input of %s should be %s, not %s.", sql.Format(f), base, want, vector.TypeName(dt))
	}
	switch base {
	case "explode":
		switch dt.ID() {
		case arrow.LIST:
			g.array = arg
		case arrow.MAP:
			g.array, g.fields = mustCall("map_entries", arg), []string{"key", "value"}
		default:
			return bad("an ARRAY or a MAP")
		}
	case "posexplode":
		if dt.ID() != arrow.LIST && dt.ID() != arrow.MAP {
			return bad("an ARRAY or a MAP")
		}
		g.array = mustCall("posexplode_entries", arg)
		g.fields = []string{"pos", "col"}
		if dt.ID() == arrow.MAP {
			g.fields = []string{"pos", "key", "value"}
		}
	case "inline":
		lt, ok := dt.(*arrow.ListType)
		if !ok || lt.Elem().ID() != arrow.STRUCT {
			return bad("an ARRAY of STRUCTs")
		}
		g.array = arg
		for _, fld := range lt.Elem().(*arrow.StructType).Fields() {
			g.fields = append(g.fields, fld.Name)
		}
	}
	return g, nil
}

// trimSentinel drops the ": <sentinel>" suffix a constructor error ends
// with, for messages that wrap it again.
func trimSentinel(err error) string {
	s := err.Error()
	for _, sen := range []error{ErrType, ErrUnsupported} {
		s = strings.TrimSuffix(s, ": "+sen.Error())
	}
	return s
}
