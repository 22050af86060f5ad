package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
)

// ConvertType maps a SQL type name (CREATE TABLE column types) to its Arrow
// type.
func ConvertType(t *sql.TypeName) (arrow.DataType, error) { return convertType(t) }
