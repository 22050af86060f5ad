package engine

import (
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

type hintSource struct {
	stream.Source
	d time.Duration
}

func (h hintSource) IdlePollDelay() time.Duration { return h.d }

type plainSource struct{ stream.Source }

// TestIdlePollDelay: the shortest hint of the sources, a source without
// one counting as the polling delay, never below the polling delay nor
// above maxIdlePoll.
func TestIdlePollDelay(t *testing.T) {
	cases := []struct {
		name    string
		sources []stream.Source
		want    time.Duration
	}{
		{"none", nil, pollingDelay},
		{"plain", []stream.Source{plainSource{}}, pollingDelay},
		{"hint", []stream.Source{hintSource{d: 80 * time.Millisecond}}, 80 * time.Millisecond},
		{"zero hint", []stream.Source{hintSource{}}, pollingDelay},
		{"below the polling delay", []stream.Source{hintSource{d: time.Millisecond}}, pollingDelay},
		{"capped", []stream.Source{hintSource{d: time.Hour}}, maxIdlePoll},
		{"shortest", []stream.Source{hintSource{d: 80 * time.Millisecond}, hintSource{d: 40 * time.Millisecond}}, 40 * time.Millisecond},
		{"a plain source keeps the polling delay", []stream.Source{hintSource{d: 80 * time.Millisecond}, plainSource{}}, pollingDelay},
	}
	for _, c := range cases {
		if got := idlePollDelay(c.sources); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
