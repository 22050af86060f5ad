package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
)

// ConvertColumnType converts the declared type of a table column. CHAR(n)
// and VARCHAR(n) are refused there: Spark pads a CHAR(n) column's values
// to n characters, compares CHAR values after padding the shorter one,
// and refuses a VARCHAR(n) value longer than n; the engine implements
// none of that, and storing them as STRING would answer wrongly. (In a
// CAST they are STRING, as in Spark, which casts to CHAR(n)/VARCHAR(n) as
// to STRING.)
func ConvertColumnType(t *sql.TypeName) (arrow.DataType, error) {
	if c := charType(t); c != nil {
		return nil, errorAt(c.Pos, ErrUnsupported, "%s(%d) columns are not supported (Spark's CHAR padding and VARCHAR length checks are not implemented); declare the column STRING.", c.Name, charLen(c))
	}
	return convertType(t)
}

// charType returns the first CHAR or VARCHAR type in t, nested or not.
func charType(t *sql.TypeName) *sql.TypeName {
	if t == nil {
		return nil
	}
	switch t.Name {
	case "CHAR", "VARCHAR":
		return t
	}
	if c := charType(t.Key); c != nil {
		return c
	}
	if c := charType(t.Elem); c != nil {
		return c
	}
	for _, f := range t.Fields {
		if c := charType(f.Type); c != nil {
			return c
		}
	}
	return nil
}

func charLen(t *sql.TypeName) int {
	if len(t.Params) > 0 {
		return t.Params[0]
	}
	return 1
}
