package memsink_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// ExampleSession is the README's Go snippet: a rate source, a windowed
// count with a watermark into the memory sink, and SQL over the sink table
// while the query runs.
func ExampleSession() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "arrowstream-example-")
	defer os.RemoveAll(dir)

	sess := arrowstream.NewSession(arrowstream.SessionOptions{CheckpointRoot: dir})
	sinks := memsink.NewCatalog()
	memsink.Install(sess, sinks, memsink.Options{})
	if _, err := sess.SQL(ctx, "CREATE TABLE clicks USING rate OPTIONS (rowsPerSecond 1000)"); err != nil {
		fmt.Println(err)
		return
	}
	q, err := sess.ReadStream("clicks").
		WithWatermark("timestamp", "10 seconds").
		GroupBy("window(timestamp, '5 seconds') AS w").Agg("count(*) AS n").
		WriteStream().Format("memory").QueryName("counts").OutputMode(arrowstream.Append).Start(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer q.Stop()
	time.Sleep(100 * time.Millisecond)
	res, err := sess.SQL(ctx, "SELECT w.start, n FROM counts ORDER BY w.start DESC LIMIT 5")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Close()
	recs, err := vector.Drain(ctx, res.Op)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		r.Release()
	}
	fmt.Println("query", q.Name(), "active:", q.IsActive())
	// Output: query counts active: true
}
