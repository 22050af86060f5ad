package plan_test
import ("testing";"fmt";"context";"github.com/arrowstream/arrowstream/plan";"github.com/apache/arrow/go/v17/arrow/memory")
func TestDbgPlan(t *testing.T) {
	for _, q := range []string{
		`SELECT array(1, 2) < array(1, 3), array(1, 2) = array(1, 2), named_struct('a', 1) < named_struct('a', 2), array(1) = array(1, 2)`,
		`SELECT x FROM VALUES (array(2, 1)), (array(1, 5)), (array(1)) AS t(x) ORDER BY x`,
		`SELECT x, count(*) FROM VALUES (array(2, 1)), (array(2, 1)), (array(1)) AS t(x) GROUP BY x`,
		`SELECT DISTINCT x FROM VALUES (array(2, 1)), (array(2, 1)), (array(1)) AS t(x)`,
		`SELECT x FROM VALUES (named_struct('a', 2)), (named_struct('a', 1)) AS t(x) ORDER BY x`,
		`SELECT x, count(*) FROM VALUES (named_struct('a', 2)), (named_struct('a', 2)) AS t(x) GROUP BY x`,
		`SELECT a.x FROM VALUES (array(1)), (array(2)) AS a(x) JOIN VALUES (array(1)) AS b(y) ON a.x = b.y`,
		`SELECT x, count(*) FROM VALUES (map(1, 2)) AS t(x) GROUP BY x`,
		`SELECT map(1, 2) = map(1, 2)`,
		`SELECT x FROM VALUES (map(1, 2)) AS t(x) ORDER BY x`,
	} {
	rows, err := runSLTQuery(context.Background(), memory.DefaultAllocator, plan.NewMemoryCatalog(), q, nil, true)
	fmt.Println(q, "\n   ", rows, err)
	}
}
