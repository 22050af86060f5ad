package server

import (
	"context"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/vector"
)

func TestExplorePanics(t *testing.T) {
	const limit = 16 << 20
	for i, q := range []string{
		"SELECT max(length(concat(s, s, s, s, s, s))) FROM (SELECT repeat('x', 100 + CAST(value % 2 AS INT)) AS s FROM big)",
		"SELECT max(length(lpad(CAST(value AS STRING), 600, 'x'))) FROM big",
		"SELECT count(*) FROM (SELECT sequence(1, 1000 + value % 2) AS s FROM big)",
		"SELECT count(*) FROM (SELECT explode(array(repeat('x', 1000), 'y')) AS e FROM big)",
		"SELECT s FROM (SELECT repeat('ab', 3500000 + CAST(value AS INT)) AS s FROM big WHERE value < 2) ORDER BY s",
		"SELECT s FROM (SELECT repeat(CAST(value AS STRING), 3) AS s FROM big WHERE value < 500000) ORDER BY s",
		"SELECT max(length(b.s)) FROM big a JOIN (SELECT value, repeat('x', 7000000 + CAST(value AS INT)) AS s FROM big WHERE value < 2) b ON a.value = b.value",
		"SELECT k, max(s) FROM (SELECT value % 2 AS k, repeat('x', 7000000 + CAST(value AS INT)) AS s FROM big WHERE value < 2) GROUP BY k",
		"SELECT s, count(*) FROM (SELECT repeat('x', 7000000 + CAST(value AS INT)) AS s FROM big WHERE value < 2) GROUP BY s",
		"SELECT k, collect_list(s) FROM (SELECT value % 2 AS k, repeat('x', 7000000 + CAST(value AS INT)) AS s FROM big WHERE value < 2) GROUP BY k",
	} {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			mapped := vector.NewMappedAllocator()
			srv, mem := startGovernedServerOn(t, mapped, 2_000_000, Limits{QueryMemoryBytes: limit, QueryTimeout: 5 * time.Minute})
			base := mem.CurrentAlloc()
			cl := sqlClient(t, srv)
			before := srv.pool.reclaimed.Load()
			err := runFlightSQL(context.Background(), cl, q)
			time.Sleep(100 * time.Millisecond)
			t.Logf("%s\n  -> reclaimed %d; alloc %d (base %d) mapped %d: %v", q, srv.pool.reclaimed.Load()-before, mem.CurrentAlloc(), base, mapped.MappedBytes(), err)
		})
	}
}
