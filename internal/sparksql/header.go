package sparksql

import (
	"bufio"
	"os"
	"strings"
)

// headerSettings reads the --SET lines at the top of a golden input file
// (SQLQueryTestSuite's per-file settings, "--SET k=v[,k2=v2]") and returns
// them as SET statements. Spark computed the file's answers under them, so
// the runner applies them before the first query; a missing input file
// has none. --CONFIG_DIM lines are not read: Spark's answers are the same
// under every value of a dimension.
func headerSettings(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var sets []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "--") {
			if line == "" {
				continue
			}
			break
		}
		rest, ok := strings.CutPrefix(line, "--SET ")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if kv = strings.TrimSpace(kv); kv != "" {
				sets = append(sets, "SET "+kv)
			}
		}
	}
	return sets, sc.Err()
}
