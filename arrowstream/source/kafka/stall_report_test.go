package kafka_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// stallReport describes where the sessions' queries are, for a test that
// waited in vain: each active query's status and its last progress (the
// sources' offsets), and the stacks of the goroutines inside the Kafka
// source, so that a stall seen once on a loaded CI machine says where it
// waited.
func stallReport(sessions ...*testSession) string {
	var b strings.Builder
	for i, s := range sessions {
		for _, q := range s.Streams().Active() {
			st := q.Status()
			fmt.Fprintf(&b, "session %d query %s: status %+v restarts:", i, q.Name(), st)
			n, err := q.Restarts()
			fmt.Fprintf(&b, " %d (%v)\n", n, err)
			recent := q.RecentProgress()
			for _, p := range recent[max(0, len(recent)-12):] { // the last epochs, with their offsets
				fmt.Fprintf(&b, "  batch %d at %s: %d rows, durations %v\n", p.BatchID, p.Timestamp, p.NumInputRows, p.DurationMs)
				for _, src := range p.Sources {
					fmt.Fprintf(&b, "    source %s: start %s end %s rows %d\n", src.Description, src.StartOffset, src.EndOffset, src.NumInputRows)
				}
			}
		}
	}
	fmt.Fprintf(&b, "at %s, goroutines in the Kafka source:\n", time.Now().Format(time.RFC3339Nano))
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	const maxReport = 48 << 10
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("arrowstream/source/kafka.")) && !bytes.Contains(g, []byte("stallReport")) {
			if b.Len()+len(g) > maxReport {
				b.WriteString("(more goroutines left out)\n")
				break
			}
			b.Write(g)
			b.WriteString("\n\n")
		}
	}
	return b.String()
}
