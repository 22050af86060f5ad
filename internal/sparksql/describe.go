package sparksql

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// describeRows renders the rows of a DESCRIBE TABLE answer (columns
// col_name, data_type, comment) as Spark's golden files show them: each
// field left-aligned in 20 characters, a NULL comment empty. ok is false
// for any other answer.
func describeRows(rec arrow.Record) (rows []string, ok bool) {
	s := rec.Schema()
	if s.NumFields() != 3 || s.Field(0).Name != "col_name" || s.Field(1).Name != "data_type" || s.Field(2).Name != "comment" {
		return nil, false
	}
	cols := make([]*array.String, 3)
	for i := range cols {
		c, isStr := rec.Column(i).(*array.String)
		if !isStr {
			return nil, false
		}
		cols[i] = c
	}
	for r := 0; r < int(rec.NumRows()); r++ {
		line := ""
		for i, c := range cols {
			v := ""
			if c.IsValid(r) {
				v = c.Value(r)
			}
			if i > 0 {
				line += "\t"
			}
			line += fmt.Sprintf("%-20s", v)
		}
		rows = append(rows, line)
	}
	return rows, true
}
