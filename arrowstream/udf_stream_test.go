package arrowstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// lenPlus is len(s) + n as a user function.
func lenPlus() *plan.ScalarFunction {
	return &plan.ScalarFunction{
		Name: "len_plus", Args: []arrow.DataType{vector.String, vector.Int64}, Result: vector.Int64, Deterministic: true,
		Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			s, n := args[0].(*array.String), args[1].(*array.Int64)
			b := array.NewInt64Builder(mem)
			defer b.Release()
			for i := 0; i < s.Len(); i++ {
				if s.IsNull(i) || n.IsNull(i) {
					b.AppendNull()
				} else {
					b.Append(int64(len(s.Value(i))) + n.Value(i))
				}
			}
			return b.NewArray(), nil
		},
	}
}

// udfFixture is a streaming query over input(k, v, ts) with len_plus
// registered on its session.
func udfFixture(t *testing.T, mode arrowstream.OutputMode, sql string) (*st.Stream, *st.Source) {
	t.Helper()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := st.NewT(t, st.Options{
		Allocator: mem, OutputMode: mode, StepTimeout: 30 * time.Second,
		Query: func(sess *arrowstream.Session) *arrowstream.DataFrame {
			if err := sess.RegisterFunction(lenPlus()); err != nil {
				t.Error(err)
			}
			return sess.SQLDataFrame(sql)
		},
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "2"},
	})
	return s, s.MustAddSource("input", st.Schema(t, "k", vector.String, "v", vector.Int64, "ts", vector.Timestamp))
}

// A user function runs in streaming projections, filters and grouping
// keys, epoch after epoch and across a restart.
func TestStreamingUserFunction(t *testing.T) {
	s, in := udfFixture(t, arrowstream.Append, "SELECT k, len_plus(k, v) AS n FROM STREAM input WHERE len_plus(k, 0) > 1")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"bb", 1, 0}, st.Row{"ccc", nil, 0}),
		st.CheckLastBatch(st.Row{"bb", 3}, st.Row{"ccc", nil}),
		st.StopStream(),
		st.AddData(in, st.Row{"dd", 10, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{"dd", 12}),
	)

	s, in = udfFixture(t, arrowstream.Update, "SELECT len_plus(k, v) AS n, count(*) AS c FROM STREAM input GROUP BY len_plus(k, v)")
	st.Run(t, s,
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.AddData(in, st.Row{"a", 1, 0}, st.Row{"b", 1, 0}, st.Row{"cc", 5, 0}),
		st.CheckLastBatch(st.Row{2, 2}, st.Row{7, 1}),
		st.StopStream(),
		st.AddData(in, st.Row{"xyz", -1, 0}),
		st.StartStream(arrowstream.ProcessingTime(0), false),
		st.CheckLastBatch(st.Row{2, 3}),
	)
}
