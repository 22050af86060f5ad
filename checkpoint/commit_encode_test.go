package checkpoint

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestCommitEncodingMatchesJSON checks the commit entry's encoder against
// json.Marshal (what every checkpoint before it holds): with and without
// a state log mark, extreme integers, segment names with characters JSON
// escapes, invalid UTF-8 and none at all.
func TestCommitEncodingMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	alphabet := []string{"a", "Z", "0", ".", "-", "_", "/", "<", ">", "&", `"`, `\`, "\n", "\t", "\x00", "\x7f", "é", "\u2028", "\xff", " "}
	ints := []int64{0, -1, 1, 1 << 62, -1 << 63, 1<<63 - 1, 1764700000000}
	for i := range 5000 {
		m := CommitMetadata{NextBatchWatermarkMs: ints[rng.IntN(len(ints))]}
		if i%3 != 0 {
			var seg []byte
			if i%5 == 0 {
				seg = []byte("00000000000000000042.log")
			} else {
				for range rng.IntN(8) {
					seg = append(seg, alphabet[rng.IntN(len(alphabet))]...)
				}
			}
			m.StateLog = &StateLogMark{Version: ints[rng.IntN(len(ints))], Segment: string(seg)}
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeCommit(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: encoded %q, json.Marshal %q", m, got, want)
		}
		var back CommitMetadata
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %v", got, err)
		}
	}
}

// TestCommitEncodingAllocatesOnce: the commit entry of an epoch is one
// allocation, its body (json.Marshal: 2, and reflection).
func TestCommitEncodingAllocatesOnce(t *testing.T) {
	m := CommitMetadata{NextBatchWatermarkMs: 1764700000000, StateLog: &StateLogMark{Version: 12, Segment: "00000000000000000000.log"}}
	if n := testing.AllocsPerRun(100, func() { encodeCommit(m) }); n > 1 {
		t.Errorf("%.0f allocations per commit entry, want 1", n)
	}
}

// FuzzCommitEncoding compares the encoder with json.Marshal on any
// watermark, version and segment name.
func FuzzCommitEncoding(f *testing.F) {
	f.Add(int64(0), int64(0), "00000000000000000000.log", true)
	f.Add(int64(-1), int64(1<<62), "a<b>\"c\\\n\xff", true)
	f.Add(int64(1764700000000), int64(0), "", false)
	f.Fuzz(func(t *testing.T, wm, version int64, seg string, mark bool) {
		m := CommitMetadata{NextBatchWatermarkMs: wm}
		if mark {
			m.StateLog = &StateLogMark{Version: version, Segment: seg}
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeCommit(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%+v: encoded %q (%v), json.Marshal %q", m, got, err, want)
		}
	})
}
