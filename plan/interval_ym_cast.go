package plan

import "github.com/arrowstream/arrowstream/vector"

// ymTypeFields are the fields of a year-month interval type by its name
// in the syntax tree (INTERVAL YEAR, INTERVAL MONTH, INTERVAL YEAR TO
// MONTH).
func ymTypeFields(name string) vector.YMFields {
	switch name {
	case "INTERVAL YEAR":
		return vector.YMYear
	case "INTERVAL MONTH":
		return vector.YMMonth
	}
	return vector.YMYearToMonth
}

// ymTypeName is the SQL name of the year-month interval type of fields f.
func ymTypeName(f vector.YMFields) string {
	switch f {
	case vector.YMYear:
		return "INTERVAL YEAR"
	case vector.YMMonth:
		return "INTERVAL MONTH"
	}
	return "INTERVAL YEAR TO MONTH"
}
