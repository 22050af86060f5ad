package vector

// SetRowCountLimit lowers the point at which group tables flush their
// 32-bit row counters, so that tests exercise the flush without 4 billion
// rows; it returns a function that restores the limit.
func SetRowCountLimit(n uint64) (restore func()) {
	old := rowCountLimit
	rowCountLimit = n
	return func() { rowCountLimit = old }
}
