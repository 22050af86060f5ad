package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// pullsUpOverAggregate reports whether the subquery side of a correlated
// equality below an aggregate is what Spark lets through an aggregate
// (DecorrelateInnerQuery.canPullUpOverAgg, checked by CheckAnalysis): a
// column, or a column cast to a type that holds every value of its own
// one to one (Cast.canUpCast). Anything else, udf(k) = outer(k) or
// k + 1 = outer(k), Spark refuses with "Correlated column is not allowed
// in predicate", and so does the engine: an answer where Spark raises
// would be a different answer.
func pullsUpOverAggregate(inner Expr) bool {
	switch x := inner.(type) {
	case *ColumnRef:
		return true
	case *Cast:
		_, col := x.X.(*ColumnRef)
		return col && canUpCast(x.X.DataType(), x.To)
	}
	return false
}

// numericRank orders the numeric types a value widens along without loss
// of its order or identity (Spark's numericPrecedence).
var numericRank = map[arrow.Type]int{
	arrow.INT8: 1, arrow.INT16: 2, arrow.INT32: 3, arrow.INT64: 4, arrow.FLOAT32: 5, arrow.FLOAT64: 6,
}

// integralDigits is the decimal digits of an integral type's range.
var integralDigits = map[arrow.Type]int32{arrow.INT8: 3, arrow.INT16: 5, arrow.INT32: 10, arrow.INT64: 20}

// canUpCast is Spark's Cast.canUpCast over the atomic types: from's values
// all map to distinct values of to.
func canUpCast(from, to arrow.DataType) bool {
	switch {
	case from == nil || to == nil:
		return false
	case arrow.TypeEqual(from, to), from.ID() == arrow.NULL:
		return true
	case isString(to):
		// Every atomic value has its string; a nested one is not atomic.
		switch from.ID() {
		case arrow.LIST, arrow.LARGE_LIST, arrow.MAP, arrow.STRUCT:
			return false
		}
		return true
	case from.ID() == arrow.DATE32 && to.ID() == arrow.TIMESTAMP:
		return true
	case from.ID() == arrow.TIMESTAMP && to.ID() == arrow.INT64, from.ID() == arrow.INT64 && to.ID() == arrow.TIMESTAMP:
		return true
	}
	fd, fromDec := from.(*arrow.Decimal128Type)
	td, toDec := to.(*arrow.Decimal128Type)
	switch {
	case fromDec && toDec:
		return td.Precision-td.Scale >= fd.Precision-fd.Scale && td.Scale >= fd.Scale
	case toDec:
		d, ok := integralDigits[from.ID()]
		return ok && td.Precision-td.Scale >= d
	case fromDec:
		d, ok := integralDigits[to.ID()]
		return ok && fd.Scale <= 0 && fd.Precision <= d
	}
	f, t := numericRank[from.ID()], numericRank[to.ID()]
	return vector.IsNumeric(from) && f > 0 && f < t
}
