package difftest

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// LooseRow renders a canonical row (cells joined by " | ") for comparison
// across engines whose result types differ while values agree: every
// number (integer, decimal, double) becomes one numeric form, an exact
// integer when it is one and fits 64 bits, else a double with 9
// significant digits (Spark types avg(decimal) as a decimal, DuckDB as a
// double; sum(int) is bigint in one, hugeint in the other).
func LooseRow(row string) string {
	cells := strings.Split(row, " | ")
	for i, c := range cells {
		cells[i] = LooseCell(c)
	}
	return strings.Join(cells, " | ")
}

// LooseCell is LooseRow for one cell.
func LooseCell(c string) string {
	s := strings.TrimPrefix(c, "dec:")
	if s == "" || s == "NULL" || s[0] == '"' || s == "true" || s == "false" {
		return c
	}
	switch s {
	case "NaN", "Infinity", "-Infinity":
		return s
	}
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		return c // a date or timestamp (yyyy-mm-dd...)
	}
	f, ok := new(big.Float).SetPrec(256).SetString(s)
	if !ok {
		return c
	}
	if f.IsInt() {
		if n, acc := f.Int64(); acc == big.Exact {
			return strconv.FormatInt(n, 10)
		}
	}
	x, _ := f.Float64()
	if x == 0 {
		return "0"
	}
	if math.Abs(x) < 1e15 && x == math.Trunc(x) {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'g', 9, 64)
}
