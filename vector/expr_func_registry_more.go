package vector

import (
	"bytes"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"math"
	"unicode/utf8"
)

// moreFunctions are the scalar functions of issue #20 (strings, binary,
// math, dates), merged into the registry at package initialisation so
// that the base table stays as it was.
var moreFunctions = map[string]funcSpec{
	"contains":   {2, 2, bytesPredicate("contains", bytes.Contains)},
	"startswith": {2, 2, bytesPredicate("startswith", bytes.HasPrefix)},
	"endswith":   {2, 2, bytesPredicate("endswith", bytes.HasSuffix)},
	"left":       {2, 2, rowBinder("left", bindLeftRight(false))},
	"right":      {2, 2, rowBinder("right", bindLeftRight(true))},
	"lpad":       {2, 3, rowBinder("lpad", bindPad(true))},
	"overlay":    {3, 4, rowBinder("overlay", bindOverlay)},
	"rpad":       {2, 3, rowBinder("rpad", bindPad(false))},
	"trim":       {1, 2, charsFirst(trimFunc("trim", true, true))},
	"btrim":      {1, 2, trimFunc("btrim", true, true)},
	"ltrim":      {1, 2, charsFirst(trimFunc("ltrim", true, false))},
	"rtrim":      {1, 2, charsFirst(trimFunc("rtrim", false, true))},
	"locate":     {2, 3, rowBinder("locate", bindLocate)},
	"position":   {2, 3, rowBinder("position", bindLocate)},
	"instr": {2, 2, rowsFunc("instr", []rowKind{rowStr, rowStr}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return locateKernel(a, i, 1, 0, -1) },
	})},
	"split_part": {3, 3, rowsFunc("split_part", []rowKind{rowStr, rowStr, rowInt}, String, rowKernels{str: splitPartKernel})},
	"replace":    {2, 3, rowsFunc("replace", []rowKind{rowStr, rowStr, rowStr}, String, rowKernels{str: replaceKernel, size: replaceSize})},
	"repeat":     {2, 2, rowsFunc("repeat", []rowKind{rowStr, rowInt}, String, rowKernels{str: repeatKernel, size: repeatSize})},
	"reverse":    {1, 1, rowsFunc("reverse", []rowKind{rowStr}, String, rowKernels{str: reverseKernel})},
	"octet_length": {1, 1, rowsFunc("octet_length", []rowKind{rowBytes}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return int64(len(a[0].str(i))), true, nil },
	})},
	"bit_length": {1, 1, rowsFunc("bit_length", []rowKind{rowBytes}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return 8 * int64(len(a[0].str(i))), true, nil },
	})},
	"ascii": {1, 1, rowsFunc("ascii", []rowKind{rowStr}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			s := a[0].str(i)
			if len(s) == 0 {
				return 0, true, nil
			}
			r, _ := utf8.DecodeRune(s)
			return int64(r), true, nil
		},
	})},
	"initcap":        {1, 1, rowsFunc("initcap", []rowKind{rowStr}, String, rowKernels{str: initcapKernel})},
	"translate":      {3, 3, rowsFunc("translate", []rowKind{rowStr, rowStr, rowStr}, String, rowKernels{str: translateKernel, size: translateSize})},
	"levenshtein":    {2, 3, rowsFunc("levenshtein", []rowKind{rowStr, rowStr, rowInt}, Int32, rowKernels{num: levenshteinKernel})},
	"soundex":        {1, 1, rowsFunc("soundex", []rowKind{rowStr}, String, rowKernels{str: soundexKernel})},
	"rlike":          {2, 2, rowBinder("rlike", bindRLike)},
	"regexp":         {2, 2, rowBinder("regexp", bindRLike)},
	"regexp_like":    {2, 2, rowBinder("regexp_like", bindRLike)},
	"regexp_replace": {3, 4, rowBinder("regexp_replace", bindRegexpReplace)},
	"regexp_extract": {2, 3, rowBinder("regexp_extract", bindRegexpExtract)},
	"hex":            {1, 1, rowBinder("hex", bindHex)},
	"unhex":          {1, 1, rowsFunc("unhex", []rowKind{rowStr}, Binary, rowKernels{str: unhexKernel})},
	"base64":         {1, 1, rowsFunc("base64", []rowKind{rowBin}, String, rowKernels{str: base64Kernel})},
	"unbase64":       {1, 1, rowsFunc("unbase64", []rowKind{rowStr}, Binary, rowKernels{str: unbase64Kernel})},
	"encode":         {2, 2, rowBinder("encode", bindEncode)},
	"decode":         {2, 2, rowBinder("decode", bindDecodeCharset)},
	"to_binary":      {1, 2, rowBinder("to_binary", bindToBinary(false))},
	"try_to_binary":  {1, 2, rowBinder("try_to_binary", bindToBinary(true))},

	"width_bucket":       {4, 4, rowBinder("width_bucket", bindWidthBucket)},
	"div":                {2, 2, rowBinder("div", bindIntDiv)},
	"&":                  {2, 2, rowBinder("&", bindBitOp('&'))},
	"|":                  {2, 2, rowBinder("|", bindBitOp('|'))},
	"^":                  {2, 2, rowBinder("^", bindBitOp('^'))},
	"~":                  {1, 1, rowBinder("~", bindBitNot)},
	"shiftleft":          {2, 2, rowBinder("shiftleft", bindShift('l'))},
	"shiftright":         {2, 2, rowBinder("shiftright", bindShift('r'))},
	"shiftrightunsigned": {2, 2, rowBinder("shiftrightunsigned", bindShift('u'))},
	"factorial":          {1, 1, rowsFunc("factorial", []rowKind{rowInt}, Int64, rowKernels{num: factorial})},
	"pi":                 {0, 0, constFunc("PI", math.Pi)},
	"e":                  {0, 0, constFunc("E", math.E)},
	"sqrt":               {1, 1, doubleFunc("SQRT", math.Sqrt)},
	"cbrt":               {1, 1, doubleFunc("CBRT", math.Cbrt)},
	"exp":                {1, 1, doubleFunc("EXP", math.Exp)},
	"expm1":              {1, 1, doubleFunc("EXPM1", math.Expm1)},
	"ln":                 {1, 1, doubleFuncNull("ln", positiveLog(math.Log))},
	"log10":              {1, 1, doubleFuncNull("LOG10", positiveLog(math.Log10))},
	"log2":               {1, 1, doubleFuncNull("LOG2", positiveLog(math.Log2))},
	"log1p": {1, 1, doubleFuncNull("LOG1P", func(x float64) (float64, bool) {
		if x <= -1 {
			return 0, false
		}
		return math.Log1p(x), true
	})},
	"log": {1, 2, func(a []Expr) Expr {
		if len(a) == 1 {
			return doubleFuncNull("ln", positiveLog(math.Log))(a)
		}
		return doubleFunc2("LOG", logBase)(a)
	}},
	"pow":     {2, 2, doubleFunc2("pow", func(x, y float64) (float64, bool) { return javaPow(x, y), true })},
	"power":   {2, 2, doubleFunc2("POWER", func(x, y float64) (float64, bool) { return javaPow(x, y), true })},
	"atan2":   {2, 2, doubleFunc2("ATAN2", func(y, x float64) (float64, bool) { return math.Atan2(y+0.0, x+0.0), true })},
	"hypot":   {2, 2, doubleFunc2("HYPOT", func(x, y float64) (float64, bool) { return math.Hypot(x, y), true })},
	"sin":     {1, 1, doubleFunc("SIN", math.Sin)},
	"cos":     {1, 1, doubleFunc("COS", math.Cos)},
	"tan":     {1, 1, doubleFunc("TAN", tanExact)},
	"asin":    {1, 1, doubleFunc("ASIN", math.Asin)},
	"acos":    {1, 1, doubleFunc("ACOS", math.Acos)},
	"atan":    {1, 1, doubleFunc("ATAN", math.Atan)},
	"sinh":    {1, 1, doubleFunc("SINH", math.Sinh)},
	"cosh":    {1, 1, doubleFunc("COSH", math.Cosh)},
	"tanh":    {1, 1, doubleFunc("TANH", math.Tanh)},
	"asinh":   {1, 1, doubleFunc("ASINH", math.Asinh)},
	"acosh":   {1, 1, doubleFunc("ACOSH", math.Acosh)},
	"atanh":   {1, 1, doubleFunc("ATANH", math.Atanh)},
	"sec":     {1, 1, doubleFunc("SEC", func(x float64) float64 { return 1 / math.Cos(x) })},
	"csc":     {1, 1, doubleFunc("CSC", func(x float64) float64 { return 1 / math.Sin(x) })},
	"cot":     {1, 1, doubleFunc("COT", func(x float64) float64 { return 1 / tanExact(x) })},
	"degrees": {1, 1, doubleFunc("DEGREES", func(x float64) float64 { return x * (180 / math.Pi) })},
	"radians": {1, 1, doubleFunc("RADIANS", func(x float64) float64 { return x * (math.Pi / 180) })},
	"sign":    {1, 1, doubleFunc("sign", sign)},
	"signum":  {1, 1, doubleFunc("SIGNUM", sign)},
	"rint":    {1, 1, doubleFunc("rint", math.RoundToEven)},

	"uuid":              {0, 0, func([]Expr) Expr { return Uuid() }},
	"to_unix_timestamp": {1, 2, func(a []Expr) Expr { return UnixTimestamp(a[0], arg(a, 1)) }},
	"date_format":       {2, 2, rowBinder("date_format", bindDateFormat)},
	"to_char":           {2, 2, rowBinder("to_char", bindDateFormat)},
	"to_varchar":        {2, 2, rowBinder("to_varchar", bindDateFormat)},
	"try_to_char":       {2, 2, rowBinder("try_to_char", bindDateFormat)},
	"date_add":          {2, 2, rowBinder("date_add", bindDateAdd(1))},
	"date_sub":          {2, 2, rowBinder("date_sub", bindDateAdd(-1))},
	"next_day":          {2, 2, rowBinder("next_day", bindNextDay)},
	"make_date":         {3, 3, rowBinder("make_date", bindMakeDate)},
	"timestampadd":      {3, 3, func(a []Expr) Expr { return TimestampAdd(a[0], a[1], a[2]) }},
	"timestampdiff":     {3, 3, func(a []Expr) Expr { return TimestampDiff(a[0], a[1], a[2]) }},
	"unix_date": {1, 1, rowsFunc("unix_date", []rowKind{rowDate}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return a[0].int(i), true, nil },
	})},
	"date_from_unix_date": {1, 1, rowsFunc("date_from_unix_date", []rowKind{rowInt}, Date, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return a[0].int(i), true, nil },
	})},
	"date_subtract": {2, 2, rowsFunc("date_subtract", []rowKind{rowDate, rowDate}, Interval, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			return (a[0].int(i) - a[1].int(i)) * fnMicrosPerDayMore, true, nil
		},
	})},
	"datediff": {2, 2, rowsFunc("datediff", []rowKind{rowDate, rowDate}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return a[0].int(i) - a[1].int(i), true, nil },
	})},
	"add_months": {2, 2, rowsFunc("add_months", []rowKind{rowDate, rowInt}, Date, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return addMonths(a[0].int(i), a[1].int(i)), true, nil },
	})},
	"last_day": {1, 1, rowsFunc("last_day", []rowKind{rowDate}, Date, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			y, m, _ := civilFromDays(a[0].int(i))
			return daysFromCivil(y, m, daysInMonth(y, m)), true, nil
		},
	})},
	"year":       {1, 1, dateField("year", func(y int64, _, _ int, _ int64) int64 { return y })},
	"month":      {1, 1, dateField("month", func(_ int64, m, _ int, _ int64) int64 { return int64(m) })},
	"day":        {1, 1, dateField("day", func(_ int64, _, d int, _ int64) int64 { return int64(d) })},
	"dayofmonth": {1, 1, dateField("dayofmonth", func(_ int64, _, d int, _ int64) int64 { return int64(d) })},
	"quarter":    {1, 1, dateField("quarter", func(_ int64, m, _ int, _ int64) int64 { return int64(m+2) / 3 })},
	"dayofweek":  {1, 1, dateField("dayofweek", func(_ int64, _, _ int, days int64) int64 { return isoDayOfWeek(days)%7 + 1 })},
	"weekday":    {1, 1, dateField("weekday", func(_ int64, _, _ int, days int64) int64 { return isoDayOfWeek(days) - 1 })},
	"dayofyear":  {1, 1, dateField("dayofyear", func(y int64, _, _ int, days int64) int64 { return dayOfYear(y, days) })},
	"weekofyear": {1, 1, dateField("weekofyear", func(_ int64, _, _ int, days int64) int64 { return isoWeekOfYear(days) })},
}

// constFunc is a function of no arguments with a constant double value.
func constFunc(name string, v float64) func([]Expr) Expr {
	return func([]Expr) Expr {
		return &FuncExpr{Name: name, bind: func(_ *FuncExpr, _ *arrow.Schema, mem memory.Allocator, _ []Evaluator) (Evaluator, error) {
			return newConst(Float64, v, mem), nil
		}}
	}
}

// charsFirst adapts trim, ltrim and rtrim, whose two-argument form takes
// the characters first (trim(chars, str), as Spark's), to the kernel's
// (str, chars) order; btrim takes (str, chars).
func charsFirst(build func(args []Expr) Expr) func(args []Expr) Expr {
	return func(args []Expr) Expr {
		if len(args) == 2 {
			args = []Expr{args[1], args[0]}
		}
		return build(args)
	}
}

// ntzSafe are the functions of moreFunctions that read a TIMESTAMP_NTZ
// as its wall clock (a date cast, or timestampadd's own zone handling).
var ntzSafe = []string{"date_add", "date_sub", "next_day", "timestampadd", "timestampdiff", "datediff", "add_months",
	"last_day", "year", "month", "day", "dayofmonth", "quarter", "dayofweek", "weekday", "dayofyear", "weekofyear",
	"unix_date", "date_subtract", "date_format", "to_char", "to_varchar", "try_to_char",
	"yearofweek"}

func init() {
	for name, spec := range moreFunctions {
		functions[name] = spec
	}
	for _, name := range ntzSafe {
		ntzFunctions[name] = true
	}
}
