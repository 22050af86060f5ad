package vector

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzBinaryCodecs checks the decoders of outside text against models:
// hex and base64 round trips, unhex against encoding/hex (with Spark's
// implicit leading zero), unbase64 against the standard decoder of the
// text's alphabet characters (Java's MIME decoder skips the others), and
// the charsets against a round trip through UTF-8.
func FuzzBinaryCodecs(f *testing.F) {
	for _, s := range []string{"", "a", "abc", "4142", "zz", "U3Bhcms=", "U3Bh\r\ncms", "a!", "====", "\xff\xfe", "é😀"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, ok := appendUnhex(nil, appendHex(nil, b)); !ok || !bytes.Equal(got, b) {
			t.Fatalf("unhex(hex(%x)) = %x, %v", b, got, ok)
		}
		text := b
		if len(text)%2 == 1 {
			text = append([]byte{'0'}, text...)
		}
		want, werr := hex.DecodeString(string(text))
		got, ok := appendUnhex(nil, b)
		if ok != (werr == nil) || ok && !bytes.Equal(got, want) {
			t.Fatalf("unhex(%q) = %x, %v; encoding/hex: %x, %v", b, got, ok, want, werr)
		}
		enc, _, _ := base64Kernel([]rowArg{{constant: true, b: b}}, 0, nil)
		dec, err := appendUnbase64(nil, enc)
		if err != nil || !bytes.Equal(dec, b) {
			t.Fatalf("unbase64(base64(%x)) = %x, %v", b, dec, err)
		}
		for _, line := range strings.Split(string(enc), "\r\n") {
			if len(line) > 76 {
				t.Fatalf("base64 line of %d characters", len(line))
			}
		}
		var clean []byte
		for _, c := range b {
			if c == '=' {
				break
			}
			if strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", c) >= 0 {
				clean = append(clean, c)
			}
		}
		model, merr := base64.RawStdEncoding.DecodeString(string(clean))
		got, err = appendUnbase64(nil, b)
		if (err == nil) != (merr == nil && len(clean)%4 != 1) || err == nil && !bytes.Equal(got, model) {
			t.Fatalf("unbase64(%q) = %x, %v; model %x, %v", b, got, err, model, merr)
		}
		if utf8.Valid(b) {
			for _, cs := range []charset{csUTF8, csUTF16BE, csUTF16LE, csUTF16} {
				if back := cs.decodeAppend(nil, cs.encodeAppend(nil, b)); !bytes.Equal(back, b) {
					t.Fatalf("charset %d round trip of %q: %q", cs, b, back)
				}
			}
		}
	})
}
