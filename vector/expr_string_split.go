package vector

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Split is split(str, regex[, limit]) → array<string>, as Spark: limit > 0
// gives at most limit elements (the last holds the rest), limit <= 0 (the
// default) splits everywhere and keeps trailing empty strings; a match of
// zero width at the start adds no leading empty string; an empty regex
// splits into characters. The regex is RE2 syntax (Go's regexp), which
// covers Java's syntax except back-references and look-around; a constant
// regex that does not compile is a bind error, a regex column that does
// not compile a runtime error. A regex that is a plain literal (such as ","
// or "\\|") splits with a byte search instead of the regex engine.
func Split(str, regex, limit Expr) Expr {
	args := []Expr{str, regex}
	if limit != nil {
		args = append(args, limit)
	}
	return &FuncExpr{Name: "split", Args: args, bind: bindSplit}
}

// splitter is a compiled split regex.
type splitter struct {
	re      *regexp.Regexp
	literal []byte // the regex matches exactly this (non-empty) literal
	empty   bool   // the regex is empty: split into characters
}

func compileSplit(pattern string) (*splitter, error) {
	if pattern == "" {
		return &splitter{empty: true}, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("invalid split regex %q: %w", pattern, err)
	}
	if prefix, complete := re.LiteralPrefix(); complete && prefix != "" {
		return &splitter{literal: []byte(prefix)}, nil
	}
	return &splitter{re: re}, nil
}

// split calls emit for each piece of s, following java.lang.String.split
// with Spark's limit handling (limit 0 behaves as -1).
func (sp *splitter) split(s []byte, limit int64, emit func([]byte)) {
	if sp.empty {
		if len(s) == 0 {
			emit(s)
			return
		}
		// Java's "abc".split("", -1) is [a, b, c, ""]: a piece per
		// character and the empty rest.
		count := int64(utf8.RuneCount(s)) + 1
		if limit <= 0 || limit > count {
			limit = count
		}
		b := 0
		for k := int64(0); k < limit-1; k++ {
			_, w := utf8.DecodeRune(s[b:])
			emit(s[b : b+w])
			b += w
		}
		emit(s[b:])
		return
	}
	limited := limit > 0
	pieces, index, matched := int64(0), 0, false
	if sp.literal != nil {
		for pos := 0; !limited || pieces < limit-1; pos = index {
			k := bytes.Index(s[pos:], sp.literal)
			if k < 0 {
				break
			}
			emit(s[index : pos+k])
			matched = true
			pieces++
			index = pos + k + len(sp.literal)
		}
	} else {
		for _, loc := range sp.re.FindAllIndex(s, -1) {
			if limited && pieces >= limit-1 {
				break
			}
			if loc[1] == 0 {
				// A zero-width match at the start adds no empty piece.
				continue
			}
			emit(s[index:loc[0]])
			matched = true
			pieces++
			index = loc[1]
		}
	}
	if !matched {
		emit(s)
		return
	}
	emit(s[index:])
}

func bindSplit(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	dt := ListOf(String)
	str, err := asStringArg(args[0], mem, f.Args[0].String())
	if err != nil {
		return nil, err
	}
	re, err := asStringArg(args[1], mem, f.Args[1].String())
	if err != nil {
		return nil, err
	}
	ev := &splitEval{str: str, re: re, dt: dt, mem: mem, expr: f.String()}
	if len(args) == 3 {
		if err := asIntArg(args[2], f.Args[2].String()); err != nil {
			return nil, err
		}
		ev.limit = args[2]
	}
	for _, a := range []Evaluator{str, re, ev.limit} {
		if a == nil {
			continue
		}
		if v, ok := fnConstValue(a); a.DataType().ID() == arrow.NULL || ok && v == nil {
			return fnNullResult(dt, mem), nil
		}
	}
	if v, ok := fnConstValue(re); ok {
		sp, err := compileSplit(v.(string))
		if err != nil {
			return nil, err
		}
		ev.splitter = sp
	}
	return fnFoldConstant(f, in, mem, ev, str, re, ev.limit)
}

type splitEval struct {
	str, re, limit Evaluator // limit may be nil
	splitter       *splitter // for a constant regex
	dt             arrow.DataType
	mem            memory.Allocator
	expr           string
}

func (s *splitEval) DataType() arrow.DataType { return s.dt }

func (s *splitEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	if s.splitter != nil && s.limit == nil {
		// The common shape: split(col, ',') runs once per distinct value of
		// a dictionary column.
		arr, err := s.str.Eval(ctx, rec)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		return mapStrings(s.mem, arr, func(a arrow.Array) (arrow.Array, error) {
			str := fnStrArg{arr: a}
			str.offs, str.data = fnBinaryView(a)
			return s.splitColumn(a.Len(), &str, nil, fnIntArg{constant: true, c: -1})
		})
	}
	arrs, err := fnEvalArgs(ctx, rec, []Evaluator{s.str, s.re, s.limit})
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	// Any of the arguments may be a constant while another is a column.
	str, err := fnNewStrArg(s.mem, s.str, arrs[0])
	if err != nil {
		return nil, err
	}
	defer str.release()
	var re *fnStrArg
	if s.splitter == nil {
		r, err := fnNewStrArg(s.mem, s.re, arrs[1])
		if err != nil {
			return nil, err
		}
		defer r.release()
		re = &r
	}
	return s.splitColumn(int(rec.NumRows()), &str, re, fnNewIntArg(s.limit, arrs[2], -1))
}

// splitColumn splits the n strings of str by the constant splitter or, when
// re is not nil, by the regex of each row.
func (s *splitEval) splitColumn(n int, str, re *fnStrArg, limit fnIntArg) (arrow.Array, error) {
	var reArr arrow.Array
	if re != nil {
		reArr = re.arr
	}
	v := newValidityOut(s.mem, n, str.arr, reArr, limit.arr)
	listBuf, listOffs := fnFixedBuf[int32](s.mem, n+1)
	elems := make([]int32, 1, n+1) // element end offsets, after a leading 0
	out := newStrOut(s.mem, 0, str.size(n))
	count := int32(0)
	emit := func(piece []byte) {
		out.appendBytes(piece)
		elems = append(elems, int32(len(out.data)))
		count++
	}
	sp := s.splitter
	var lastRe []byte
	for i := 0; i < n; i++ {
		listOffs[i] = count
		if !v.valid(i) {
			continue
		}
		if re != nil {
			pat := re.at(i)
			if sp == nil || !bytes.Equal(pat, lastRe) {
				var err error
				if sp, err = compileSplit(string(pat)); err != nil {
					listBuf.Release()
					out.release()
					v.release()
					return nil, &EvalError{Expr: s.expr, Row: i, Values: "regex=" + FormatValue(string(pat), String), Err: err}
				}
				lastRe = pat
			}
		}
		sp.split(str.at(i), limit.at(i), emit)
	}
	listOffs[n] = count
	offBuf, dataBuf, err := out.finish()
	if err != nil {
		listBuf.Release()
		v.release()
		return nil, err
	}
	offBuf.Release() // the element offsets were collected in elems
	elemOffs, elemView := fnFixedBuf[int32](s.mem, len(elems))
	copy(elemView, elems)
	child := fnNewArray(String, len(elems)-1, []*memory.Buffer{nil, elemOffs, dataBuf}, nil, 0)
	defer child.Release()
	bm, nulls := v.finish()
	return fnNewArray(s.dt, n, []*memory.Buffer{bm, listBuf}, []arrow.ArrayData{child.Data()}, nulls), nil
}
