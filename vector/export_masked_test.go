package vector

// MaskedRuns lists, for the tests of package vector_test, the runs of
// calls r folds together in one pass (foldMaskedRun) as [first, end).
func MaskedRuns(r *LiveRaw) [][2]int {
	var runs [][2]int
	for i := 0; i < len(r.masked); i++ {
		if end := r.maskedRunEnd(i); end > i {
			runs = append(runs, [2]int{i, end})
			i = end - 1
		}
	}
	return runs
}
