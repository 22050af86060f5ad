package plan

// Why the type settings other than Spark's defaults are refused at SET.
// spark.sql.readSideCharPadding is accepted with any value: it pads the
// values of CHAR(n) table columns when they are read, and the engine has
// no CHAR(n) columns (ConvertColumnType refuses them), so no query the
// engine runs answers differently under either value.
const (
	whyCrossJoin = "the engine runs every join whose condition is missing or always true as a " +
		"cross join, Spark's default; the check that refuses an implicit cartesian product " +
		"(false) is not implemented"
	whyLegacyInterval = "the legacy CalendarInterval results of interval literals and " +
		"timestamp subtraction are not implemented; the engine gives Spark's ANSI " +
		"year-month and day-time intervals, the default"
	whyCharVarcharAsString = "CHAR(n) and VARCHAR(n) table columns are refused rather than " +
		"read as STRING; declare such columns STRING, which is what this setting would do"
)
