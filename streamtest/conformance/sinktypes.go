package conformance

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/streamtest"
)

// checkSinkTypes compares the sink's columns with the scenario's `output`
// by count and type. Values compare by number, so without this an int
// where Spark has a bigint or a double (avg, sum, a cast) would pass
// silently.
func checkSinkTypes(sc *Scenario, fix *streamtest.Stream) error {
	if sc.Query == nil || len(sc.Output) == 0 {
		return nil
	}
	t := fix.Sink()
	if t == nil {
		return nil
	}
	fields := t.Schema().Fields()
	if len(fields) != len(sc.Output) {
		return fmt.Errorf("the sink has %d columns %v, the scenario's output lists %d", len(fields), t.Schema(), len(sc.Output))
	}
	for i, c := range sc.Output {
		want, err := arrowType(c.Type)
		if err != nil {
			return fmt.Errorf("output column %s: %w", c.Name, err)
		}
		if !sameScenarioType(want, fields[i].Type) {
			return fmt.Errorf("sink column %d (%s) is %s, the scenario's output %s is %s", i, fields[i].Name, fields[i].Type, c.Name, c.Type)
		}
	}
	return nil
}

// sameScenarioType reports whether got is the scenario type want: the
// same Arrow type, with string encodings and timestamp units and zones
// taken as one type each (the format has one string and one timestamp).
func sameScenarioType(want, got arrow.DataType) bool {
	kind := func(t arrow.DataType) arrow.Type {
		switch t.ID() {
		case arrow.LARGE_STRING, arrow.STRING_VIEW:
			return arrow.STRING
		}
		return t.ID()
	}
	return kind(want) == kind(got)
}
