package streamtest

import (
	"fmt"
	"os"
	"path/filepath"
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
	fmt.Fprintf(&b, "== offset log (%s) ==\n", filepath.Join(s.ckpt, "offsets"))
	b.WriteString(readCheckpointLog(s.ckpt, "offsets"))
	fmt.Fprintf(&b, "== commit log (%s) ==\n", filepath.Join(s.ckpt, "commits"))
	b.WriteString(readCheckpointLog(s.ckpt, "commits"))
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

// readCheckpointLog renders the entries of <checkpoint>/<name>, one per
// line ("N: body").
func readCheckpointLog(ckpt, name string) string {
	dir := filepath.Join(ckpt, name)
	if _, err := os.Stat(dir); err != nil {
		return "  (none)\n"
	}
	log, err := checkpoint.OpenLog(dir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		return fmt.Sprintf("  (unreadable: %v)\n", err)
	}
	epochs, err := log.Epochs()
	if err != nil {
		return fmt.Sprintf("  (unreadable: %v)\n", err)
	}
	if len(epochs) == 0 {
		return "  (none)\n"
	}
	var b strings.Builder
	for _, e := range epochs {
		body, _, err := log.Get(e)
		if err != nil {
			fmt.Fprintf(&b, "  %d: (unreadable: %v)\n", e, err)
			continue
		}
		fmt.Fprintf(&b, "  %d: %s\n", e, strings.Join(strings.Fields(string(body)), " "))
	}
	return b.String()
}
