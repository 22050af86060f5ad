package stateful

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// checkStateColumn refuses array columns in state rows. The key encoder
// encodes arrays (batch GROUP BY, DISTINCT and joins use it), but it
// normalizes the doubles inside them (-0.0 to 0.0), which is Spark's
// grouping equality for keys and a wrong answer for values kept in
// state (collect_list's partial lists, a join's or dedup's payload), and
// state rows do not tell keys from values here; until list state has its
// own encoding, streaming operators keep refusing arrays when the query
// starts, naming the type.
func checkStateColumn(f arrow.Field) error {
	if hasList(f.Type) {
		return fmt.Errorf("%s cannot be a grouping or join key in streaming state (column %s): arrays are not kept in state yet: %w",
			vector.TypeName(f.Type), f.Name, vector.ErrType)
	}
	return nil
}

func hasList(dt arrow.DataType) bool {
	switch t := vector.Unwrap(dt).(type) {
	case *arrow.ListType:
		return true
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if hasList(f.Type) {
				return true
			}
		}
	}
	return false
}
