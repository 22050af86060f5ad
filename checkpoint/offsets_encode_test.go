package checkpoint

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// referenceOffsetSeq is the entry as json.Marshal writes its metadata
// line (what every checkpoint before the reflection-free encoder holds).
func referenceOffsetSeq(t *testing.T, seq OffsetSeq) []byte {
	t.Helper()
	if seq.Conf == nil {
		seq.Conf = map[string]string{}
	}
	meta, err := json.Marshal(seq)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range seq.Offsets {
		meta = append(meta, '\n')
		if off == nil {
			meta = append(meta, '-')
			continue
		}
		meta = append(meta, off...)
	}
	return meta
}

// TestOffsetSeqEncodingMatchesJSON checks the offset log's encoder
// against json.Marshal over random entries (negative and extreme
// integers, settings with characters JSON escapes, invalid UTF-8, empty
// and missing settings), through an OffsetLog whose settings are kept
// from entry to entry, changed, or mutated in place.
func TestOffsetSeqEncodingMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	alphabet := []string{"a", "Z", "0", ".", "<", ">", "&", `"`, `\`, "\n", "\t", "\x00", "\x7f", "é", "\u2028", "\xff", " "}
	str := func() string {
		var b []byte
		for range rng.IntN(6) {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		return string(b)
	}
	ints := []int64{0, -1, 1, 1 << 62, -1 << 63, 1<<63 - 1, 1764700000000}
	log := &OffsetLog{}
	conf := map[string]string{"spark.sql.shuffle.partitions": "200"}
	for i := range 2000 {
		switch rng.IntN(6) {
		case 0:
			conf = map[string]string{}
		case 1:
			conf = nil
		case 2:
			if conf != nil {
				conf[str()] = str() // in place: the kept JSON must not be reused
			}
		case 3:
			conf = map[string]string{str(): str(), str(): str()}
		}
		seq := OffsetSeq{Conf: conf}
		if rng.IntN(2) == 0 {
			seq.BatchWatermarkMs = ints[rng.IntN(len(ints))]
			seq.BatchTimestampMs = ints[rng.IntN(len(ints))]
		} else {
			seq.BatchWatermarkMs = rng.Int64() - rng.Int64()
			seq.BatchTimestampMs = rng.Int64()
		}
		for range rng.IntN(3) {
			if rng.IntN(4) == 0 {
				seq.Offsets = append(seq.Offsets, nil)
			} else {
				seq.Offsets = append(seq.Offsets, json.RawMessage(`{"0":12}`))
			}
		}
		want := referenceOffsetSeq(t, seq)
		got, err := log.encode(seq)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("entry %d: encoded\n%q\nwant\n%q", i, got, want)
		}
		if got, err = encodeOffsetSeq(seq); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("entry %d: encodeOffsetSeq gave %q (%v), want %q", i, got, err, want)
		}
		back, err := decodeOffsetSeq(got)
		if err != nil {
			t.Fatalf("entry %d: decode: %v", i, err)
		}
		if back.BatchWatermarkMs != seq.BatchWatermarkMs || back.BatchTimestampMs != seq.BatchTimestampMs || len(back.Offsets) != len(seq.Offsets) {
			t.Fatalf("entry %d: decoded %+v from %+v", i, back, seq)
		}
	}
}
