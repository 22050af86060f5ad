package streamtest

import (
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Dump renders the fixture for a failure message: the actions so far (the
// last one is the one that failed), the checkpoint's offset- and
// commit-log entries, the sink's epochs and the query's state.
func (s *Stream) Dump() string {
	var b strings.Builder
	b.WriteString("== actions ==\n")
	for i, a := range s.history {
		mark := "  "
		if i == len(s.history)-1 {
			mark = "=>"
		}
		fmt.Fprintf(&b, "%s %3d %s\n", mark, i, a)
	}
	fmt.Fprintf(&b, "== offset log (%s) ==\n", checkpoint.OffsetLogPath(s.ckpt))
	b.WriteString(readCheckpointLogs(s.ckpt))
	b.WriteString("== sink epochs ==\n")
	if t := s.Sink(); t == nil {
		b.WriteString("  (no sink yet)\n")
	} else if d := t.DebugString(); d == "" {
		fmt.Fprintf(&b, "  (empty; latest epoch %d)\n", t.LatestEpoch())
	} else {
		for _, line := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	b.WriteString("== query ==\n")
	if s.query == nil {
		b.WriteString("  (never started)\n")
		return b.String()
	}
	q := s.query
	fmt.Fprintf(&b, "  active: %v, trigger: %s, manual clock: %v (now %d ms)\n", q.IsActive(), s.trigger, s.manualRun, s.manual.Now().UnixMilli())
	if err := q.Exception(); err != nil {
		fmt.Fprintf(&b, "  exception: %v\n", err)
	}
	if p := q.LastProgress(); p != nil {
		fmt.Fprintf(&b, "  last progress: %s\n", p.JSON())
	}
	return b.String()
}

// readCheckpointLogs renders the offset and then the commit entries of the
// checkpoint, one per line ("N: body"), in whichever format it has.
func readCheckpointLogs(ckpt string) string {
	if ok, err := checkpoint.HasEpochLog(ckpt); err != nil || !ok {
		return "  (none)\n== commit log ==\n  (none)\n"
	}
	offs, coms, err := checkpoint.OpenEpochLogs(ckpt, &checkpoint.Writer{NoSync: true})
	if err != nil {
		return fmt.Sprintf("  (unreadable: %v)\n== commit log ==\n", err)
	}
	defer coms.Close()
	var b strings.Builder
	render(&b, offs.Epochs, offs.EntryBody)
	b.WriteString("== commit log ==\n")
	render(&b, coms.Epochs, coms.EntryBody)
	return b.String()
}

func render(b *strings.Builder, epochs func() ([]int64, error), body func(int64) ([]byte, bool, error)) {
	es, err := epochs()
	if err != nil {
		fmt.Fprintf(b, "  (unreadable: %v)\n", err)
		return
	}
	if len(es) == 0 {
		b.WriteString("  (none)\n")
		return
	}
	for _, e := range es {
		data, _, err := body(e)
		if err != nil {
			fmt.Fprintf(b, "  %d: (unreadable: %v)\n", e, err)
			continue
		}
		fmt.Fprintf(b, "  %d: %s\n", e, strings.Join(strings.Fields(string(data)), " "))
	}
}
