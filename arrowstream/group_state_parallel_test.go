package arrowstream_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	st "github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// TestGroupStateParallelPartitions runs a counting function over many keys
// in 3 state partitions (processed in parallel, timeouts too): the answers
// are those of a sequential run, and the function is never running twice
// for the same key at once (run with -race).
func TestGroupStateParallelPartitions(t *testing.T) {
	var mu sync.Mutex
	running := map[string]bool{}
	fn := func(key arrow.Array, rows arrow.Record, s *arrowstream.GroupState) (arrow.Record, error) {
		k := key.ValueStr(0)
		mu.Lock()
		if running[k] {
			mu.Unlock()
			return nil, fmt.Errorf("function called concurrently for key %s", k)
		}
		running[k] = true
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(running, k)
			mu.Unlock()
		}()
		time.Sleep(100 * time.Microsecond) // widen the window of a concurrent call
		if s.HasTimedOut() {
			s.Remove()
			return gsRow(k, -1, s.GetCurrentProcessingTimeMs()), nil
		}
		n := gsInt(s) + rows.NumRows()
		if err := gsSet(s, n); err != nil {
			return nil, err
		}
		if err := s.SetTimeoutDuration(5 * time.Second); err != nil {
			return nil, err
		}
		return gsRow(k, n, s.GetCurrentProcessingTimeMs()), nil
	}
	const keys = 40
	var first, second, odd, even, input []st.Row
	for i := 0; i < keys; i++ {
		k := fmt.Sprintf("k%02d", i)
		input = append(input, st.Row{k}, st.Row{k})
		first = append(first, st.Row{k, 2, 1000})
		if i%2 == 0 {
			second = append(second, st.Row{k, 3, 2000})
			even = append(even, st.Row{k, -1, 8000})
		} else {
			odd = append(odd, st.Row{k, -1, 7000})
		}
	}
	var evens []st.Row
	for i := 0; i < keys; i += 2 {
		evens = append(evens, st.Row{fmt.Sprintf("k%02d", i)})
	}
	forBoth(t, func(t *testing.T, restart bool) {
		s, in := gsFixture(t, func(sess *arrowstream.Session) *arrowstream.DataFrame {
			return sess.ReadStream("input").GroupByKey("value").FlatMapGroupsWithState(gsOut, arrowstream.Update, arrowstream.ProcessingTimeTimeout, fn)
		}, "value", vector.String)
		st.Run(t, s, epochs(restart, st.StartStream(arrowstream.ProcessingTime(time.Second), true),
			[]st.Action{st.AddData(in, input...), st.AdvanceClock(time.Second), st.CheckNewAnswer(first...)},
			[]st.Action{st.AddData(in, evens...), st.AdvanceClock(time.Second), st.CheckNewAnswer(second...),
				st.AssertStateRows([]int64{keys}, nil, nil)},
			// Odd keys time out at 7000 (timeout 6000 < 7000), even ones at 8000.
			[]st.Action{st.AdvanceClock(5 * time.Second), st.CheckNewAnswer(odd...)},
			[]st.Action{st.AdvanceClock(time.Second), st.CheckNewAnswer(even...), st.AssertStateRows([]int64{0}, nil, nil)},
		)...)
	})
}
