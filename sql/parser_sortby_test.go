package sql

import (
	"strings"
	"testing"
)

// SORT BY, DISTRIBUTE BY and CLUSTER BY (Hive's clauses, Spark's
// queryOrganization): their place after ORDER BY's, their order, and the
// combinations Spark refuses.
func TestPartitionClauses(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"select * from data sort by 1 desc", "SELECT * FROM data SORT BY 1 DESC"},
		{"select a from t distribute by a sort by b nulls last limit 2", "SELECT a FROM t DISTRIBUTE BY a SORT BY b NULLS LAST LIMIT 2"},
		{"select a, b from t cluster by a, b + 1", "SELECT a, b FROM t CLUSTER BY a, b + 1"},
		{"select a from t where a > 1 distribute by a", "SELECT a FROM t WHERE a > 1 DISTRIBUTE BY a"},
		{"select a from t union all select b from u sort by 1", "SELECT a FROM t UNION ALL SELECT b FROM u SORT BY 1"},
		{"select * from (select a from t sort by a) s", "SELECT * FROM (SELECT a FROM t SORT BY a) AS s"},
		{"select sort from t", "SELECT sort FROM t"},
		{"(select a from t sort by a) union all select b from u", "(SELECT a FROM t SORT BY a) UNION ALL SELECT b FROM u"},
		{"values (1, 2) union all table db.t", "VALUES (1, 2) UNION ALL SELECT * FROM db.t"},
	} {
		s, err := Parse(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := Format(s); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	q, err := Parse("select a from t cluster by a")
	if err != nil {
		t.Fatal(err)
	}
	if qq := q.(*Query); !qq.Cluster || len(qq.SortBy) != 1 || len(qq.DistributeBy) != 1 || qq.SortBy[0].Desc {
		t.Errorf("CLUSTER BY a: got sort %v, distribute %v, cluster %v", qq.SortBy, qq.DistributeBy, qq.Cluster)
	}
	for _, bad := range []string{
		"select a from t order by a sort by a",
		"select a from t order by a distribute by a",
		"select a from t cluster by a sort by a",
		"select a from t cluster by a distribute by a",
		"select a from t sort by a distribute by a",
		"select a from t sort by",
	} {
		_, err := Parse(bad)
		if err == nil {
			t.Errorf("%s parsed", bad)
			continue
		}
		if strings.Contains(bad, "order by") || strings.Contains(bad, "cluster by a sort") || strings.Contains(bad, "cluster by a distribute") {
			if !strings.Contains(err.Error(), "Combination of ORDER BY/SORT BY/DISTRIBUTE BY/CLUSTER BY is not supported") {
				t.Errorf("%s: %v", bad, err)
			}
		}
	}
}
