package vector

// unix_seconds, unix_millis and unix_micros: a TIMESTAMP as a count of
// seconds, milliseconds or microseconds since 1970-01-01 00:00:00 UTC,
// rounded down (floor) as Spark's UnixSeconds and UnixMillis do, so an
// instant before the epoch counts the unit it falls in. A TIMESTAMP_NTZ
// is refused (checkNTZArgs): Spark takes only TIMESTAMP.
var unixEpochFunctions = map[string]funcSpec{
	"unix_seconds": {1, 1, rowsFunc("unix_seconds", []rowKind{rowMicros}, Int64, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			return fnFloorDiv(a[0].int(i), fnMicrosPerSecond), true, nil
		},
	})},
	"unix_millis": {1, 1, rowsFunc("unix_millis", []rowKind{rowMicros}, Int64, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return fnFloorDiv(a[0].int(i), 1000), true, nil },
	})},
	"unix_micros": {1, 1, rowsFunc("unix_micros", []rowKind{rowMicros}, Int64, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return a[0].int(i), true, nil },
	})},
}

func init() {
	for name, spec := range unixEpochFunctions {
		functions[name] = spec
	}
}
