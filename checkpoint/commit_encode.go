package checkpoint

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// encodeCommit writes a commit entry's body: the bytes json.Marshal
// writes for m, without reflection (an entry is written every epoch).
// A segment name JSON would escape (not one the logs make) takes
// json.Marshal itself, so the bytes are the same for every m.
func encodeCommit(m CommitMetadata) ([]byte, error) {
	if m.StateLog != nil && !plainJSONString(m.StateLog.Segment) {
		return json.Marshal(m)
	}
	n := 40
	if m.StateLog != nil {
		n += 50 + len(m.StateLog.Segment)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"nextBatchWatermarkMs":`...)
	b = strconv.AppendInt(b, m.NextBatchWatermarkMs, 10)
	if m.StateLog != nil {
		b = append(b, `,"stateLog":{"version":`...)
		b = strconv.AppendInt(b, m.StateLog.Version, 10)
		b = append(b, `,"segment":"`...)
		b = append(b, m.StateLog.Segment...)
		b = append(b, `"}`...)
	}
	return append(b, '}'), nil
}

// plainJSONString reports whether json.Marshal writes s as its bytes
// between quotes: printable ASCII other than the characters it escapes
// (", \ and, HTML-safe, <, > and &).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
