package server

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/sql"
)

// Defaults of the quotas the arrowstream command sets (the zero Limits
// leave them unbounded for embedding applications).
const (
	DefaultMaxStreamingTables          = 200
	DefaultMaxStreamingTablesPerUser   = 50
	DefaultMaxConcurrentQueries        = 64
	DefaultMaxConcurrentQueriesPerUser = 16
)

// quotas counts what each user runs: statements in flight, and the
// streaming tables each user created (to count them per user).
type quotas struct {
	l       Limits
	queries QueryLister // nil: streaming tables are not counted

	mu      sync.Mutex
	running int
	perUser map[string]int
	owners  map[string]string // lower-case table name -> user who created it
}

func newQuotas(l Limits, queries QueryLister) *quotas {
	return &quotas{l: l, queries: queries, perUser: map[string]int{}, owners: map[string]string{}}
}

// acquire takes a slot of the concurrent-query quotas for user.
func (q *quotas) acquire(user string) (func(), error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m := q.l.MaxConcurrentQueries; m > 0 && q.running >= m {
		return nil, statusf(codes.ResourceExhausted, "quota exceeded: the server runs at most %d statements at once (Limits.MaxConcurrentQueries, --max-concurrent-queries); retry later", m)
	}
	if m := q.l.MaxConcurrentQueriesPerUser; m > 0 && q.perUser[user] >= m {
		return nil, statusf(codes.ResourceExhausted, "quota exceeded: user %q runs at most %d statements at once (Limits.MaxConcurrentQueriesPerUser, --max-concurrent-queries-per-user); retry later", user, m)
	}
	q.running++
	q.perUser[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.running--
			if q.perUser[user]--; q.perUser[user] <= 0 {
				delete(q.perUser, user)
			}
		})
	}, nil
}

// createdTable returns the name of the streaming table a statement
// creates ("" for any other statement).
func createdTable(text string) string {
	st, err := sql.Parse(text)
	if err != nil {
		return ""
	}
	c, ok := st.(*sql.CreateStreamingTable)
	if !ok || len(c.Name) == 0 {
		return ""
	}
	return c.Name[len(c.Name)-1].Name
}

// usage is what a set of streaming tables holds.
type usage struct {
	tables          int
	stateBytes      int64
	checkpointBytes int64
}

// usageOf sums the active streaming tables, all of them and user's.
func (q *quotas) usageOf(user string) (all, mine usage) {
	for _, tu := range q.runningTables() {
		all.add(tu.u)
		if tu.owner == user {
			mine.add(tu.u)
		}
	}
	return all, mine
}

func (u *usage) add(o usage) {
	u.tables += o.tables
	u.stateBytes += o.stateBytes
	u.checkpointBytes += o.checkpointBytes
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// admitTable checks the streaming-table quotas before user creates table.
func (q *quotas) admitTable(user, table string) error {
	if q.queries == nil {
		return nil
	}
	l := q.l
	if l.MaxStreamingTables <= 0 && l.MaxStreamingTablesPerUser <= 0 && l.MaxStateBytes <= 0 && l.MaxStateBytesPerUser <= 0 &&
		l.MaxCheckpointBytes <= 0 && l.MaxCheckpointBytesPerUser <= 0 {
		return nil
	}
	all, mine := q.usageOf(user)
	fail := func(format string, args ...any) error {
		return statusf(codes.ResourceExhausted, "quota exceeded, %q not created: "+format, append([]any{table}, args...)...)
	}
	switch {
	case l.MaxStreamingTables > 0 && all.tables >= l.MaxStreamingTables:
		return fail("the server runs %d streaming tables, its limit (Limits.MaxStreamingTables, --max-streaming-tables); drop one first", all.tables)
	case l.MaxStreamingTablesPerUser > 0 && mine.tables >= l.MaxStreamingTablesPerUser:
		return fail("user %q runs %d streaming tables, the per-user limit (Limits.MaxStreamingTablesPerUser, --max-streaming-tables-per-user); drop one first", user, mine.tables)
	case l.MaxStateBytes > 0 && all.stateBytes >= l.MaxStateBytes:
		return fail("the streaming tables hold %d bytes of state, the server's limit is %d (Limits.MaxStateBytes, --max-state-bytes)", all.stateBytes, l.MaxStateBytes)
	case l.MaxStateBytesPerUser > 0 && mine.stateBytes >= l.MaxStateBytesPerUser:
		return fail("user %q's streaming tables hold %d bytes of state, the per-user limit is %d (Limits.MaxStateBytesPerUser, --max-state-bytes-per-user)", user, mine.stateBytes, l.MaxStateBytesPerUser)
	case l.MaxCheckpointBytes > 0 && all.checkpointBytes >= l.MaxCheckpointBytes:
		return fail("the checkpoints hold %d bytes, the server's limit is %d (Limits.MaxCheckpointBytes, --max-checkpoint-bytes)", all.checkpointBytes, l.MaxCheckpointBytes)
	case l.MaxCheckpointBytesPerUser > 0 && mine.checkpointBytes >= l.MaxCheckpointBytesPerUser:
		return fail("user %q's checkpoints hold %d bytes, the per-user limit is %d (Limits.MaxCheckpointBytesPerUser, --max-checkpoint-bytes-per-user)", user, mine.checkpointBytes, l.MaxCheckpointBytesPerUser)
	}
	return nil
}

// created records that user created table.
func (q *quotas) created(user, table string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.owners[strings.ToLower(table)] = user
}

// checkStatement refuses a statement longer than the limit, before it is
// parsed or planned.
func (s *Server) checkStatement(text string) error {
	if m := s.cfg.Limits.MaxStatementBytes; m > 0 && len(text) > m {
		return statusf(codes.InvalidArgument, "statement of %d bytes is longer than the limit of %d bytes (Limits.MaxStatementBytes, --max-statement-bytes)", len(text), m)
	}
	return nil
}

// admit takes the concurrent-query quota of the calling user.
func (s *Server) admit(ctx context.Context) (func(), error) {
	return s.quotas.acquire(UserFromContext(ctx))
}

// execQuota wraps a command: the streaming-table quotas before, the owner
// record after.
func (s *Server) execQuota(ctx context.Context, text string, run func() (int64, error)) (int64, error) {
	table := createdTable(text)
	user := UserFromContext(ctx)
	if table != "" {
		if err := s.quotas.admitTable(user, table); err != nil {
			return 0, err
		}
	}
	n, err := run()
	if err == nil && table != "" {
		s.quotas.created(user, table)
	}
	if err == nil && isDrop(text) {
		s.ret.dropped()
	}
	return n, err
}

// maxTicketBytes bounds the statement tickets DoGet decodes: room for the
// longest statement accepted with every byte JSON-escaped (\u00XX), so
// that a statement that was planned always has a ticket DoGet takes.
func (s *Server) maxTicketBytes() int {
	return max(maxTicketBytes, 6*s.cfg.Limits.MaxStatementBytes+4096)
}

// isDrop tells a DROP statement, whose released table the memory returner
// hears of.
func isDrop(text string) bool {
	f := strings.Fields(text)
	return len(f) > 0 && strings.EqualFold(f[0], "DROP")
}
