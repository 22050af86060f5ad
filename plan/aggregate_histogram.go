package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// histogram_numeric(x, nb), bound by vector as Spark's HistogramNumeric.

func init() {
	aggFuncs["histogram_numeric"] = vector.AggHistogramNumeric
}

// histogramArgs checks histogram_numeric's arguments: a numeric, date,
// timestamp or interval value, and a constant integer number of bins of
// at least 2, folded to an INT literal.
func histogramArgs(f *sql.FuncCall, args []Expr) ([]Expr, error) {
	if len(args) != 2 {
		return nil, errorAt(f.Pos, ErrType, "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `histogram_numeric` requires 2 parameters but the actual number is %d.", len(args))
	}
	t := vector.Unwrap(args[0].DataType())
	switch {
	case isNullType(t):
		args[0] = castTo(args[0], vector.Float64)
	case t.ID() == arrow.DECIMAL128:
		// Spark's NumericHistogram reads a value as a java.lang.Number, which
		// its Decimal is not.
		return nil, errorAt(f.Pos, ErrUnsupported, "histogram_numeric of %s is not supported.", vector.TypeName(t))
	case vector.IsNumeric(t) || t.ID() == arrow.DATE32 || t.ID() == arrow.TIMESTAMP || t.ID() == arrow.INTERVAL_MONTHS || t.ID() == arrow.DURATION:
	default:
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %q due to data type mismatch: Parameter 1 requires the (\"NUMERIC\" or \"DATE\" or \"TIMESTAMP\" or \"TIMESTAMP_NTZ\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL DAY TO SECOND\") type, however %q has the type %q.", sql.Format(f), sql.Format(f.Args[0]), vector.TypeName(t))
	}
	if !isConstant(args[1]) {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] Cannot resolve %q due to data type mismatch: histogram_numeric needs the nBins provided must be a constant literal.", sql.Format(f))
	}
	nt := vector.Unwrap(args[1].DataType())
	if !vector.IsIntegral(nt) && !isNullType(nt) {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve %q due to data type mismatch: Parameter 2 requires the \"INT\" type, however %q has the type %q.", sql.Format(f), sql.Format(f.Args[1]), vector.TypeName(nt))
	}
	l, err := foldConstant(castTo(args[1], vector.Int32))
	if err != nil {
		return nil, err
	}
	n, ok := l.Value.(int32)
	if !ok {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH] Cannot resolve %q due to data type mismatch: histogram_numeric needs nBins value must not be null.", sql.Format(f))
	}
	if n < 2 {
		return nil, errorAt(f.Pos, ErrType, "[DATATYPE_MISMATCH] Cannot resolve %q due to data type mismatch: histogram_numeric needs nBins to be at least 2, but you supplied %d.", sql.Format(f), n)
	}
	args[1] = l
	return args, nil
}
