package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ToNumber is to_number(x, fmt): x parsed with Spark's number format fmt
// (a constant string) into DECIMAL(p, s), p and s counted from the format.
// A string that does not match raises.
func ToNumber(x, format Expr) Expr {
	return &FuncExpr{Name: "to_number", Args: []Expr{x, format}, bind: bindToNumber(true)}
}

// TryToNumber is try_to_number(x, fmt): to_number, but NULL for a string
// that does not match the format.
func TryToNumber(x, format Expr) Expr {
	return &FuncExpr{Name: "try_to_number", Args: []Expr{x, format}, bind: bindToNumber(false)}
}

func bindToNumber(raise bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		v, ok := fnConstValue(args[1])
		if !ok || args[1].DataType().ID() != arrow.STRING {
			return nil, fmt.Errorf("the format %s must be a constant, non-NULL string: %w", f.Args[1], ErrType)
		}
		nf, err := compileNumberFormat(v.(string))
		if err != nil {
			return nil, err
		}
		to := Decimal(int32(nf.precision), int32(nf.scale))
		x, err := asStringArg(args[0], mem, f.Args[0].String())
		if err != nil {
			return nil, err
		}
		if x.DataType().ID() == arrow.NULL {
			return fnNullResult(to, mem), nil
		}
		return fnFoldConstant(f, in, mem, unaryKernelEval(f, x, to, toNumberKernel(nf, to, raise), mem), x)
	}
}

// errNumberMismatch is Spark's error for a string that does not match a
// number format (to_number; try_to_number gives NULL).
func errNumberMismatch(nf *numberFormat, in []byte) error {
	return fmt.Errorf("%w: The input string '%s' does not match the given number format: '%s' (try_to_number returns NULL instead)", ErrInvalidInput, in, nf.src)
}

// toNumberKernel parses a string column with a compiled number format into
// decimals; the scratch is per batch, so one evaluator may serve batches
// concurrently.
func toNumberKernel(nf *numberFormat, to arrow.DataType, raise bool) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		n := arr.Len()
		offs, data := fnBinaryView(arr)
		buf, dst := fnFixedBuf[decimal128.Num](c.mem, n)
		v := newValidityOut(c.mem, n, arr)
		sc := nfScratch{groups: make([]int, 0, nf.maxGroups+1)}
		for i := 0; i < n; i++ {
			dst[i] = decimal128.Num{}
			if !v.valid(i) {
				continue
			}
			s := data[offs[i]:offs[i+1]]
			d, res := nf.parse(s, &sc)
			switch {
			case res == nfOK:
				dst[i] = d
			case res == nfTooLarge:
				// Spark raises here in try_to_number too: the text
				// matched, the decimal cannot hold it.
				buf.Release()
				v.release()
				return nil, c.rowError(arr, i, fmt.Errorf("%w: the digits of '%s' do not fit %s (number format '%s')", ErrOverflow, s, TypeName(to), nf.src))
			case raise:
				buf.Release()
				v.release()
				return nil, c.rowError(arr, i, errNumberMismatch(nf, s))
			default:
				v.setNull(i)
			}
		}
		bm, nulls := v.finish()
		return fnNewArray(to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
	}
}
