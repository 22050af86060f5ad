package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSealRoundTrip(t *testing.T) {
	for _, p := range [][]byte{nil, []byte(`{"startTimeMs":1}`), []byte("v1\n{\"t\":{\"0\":5}}"), []byte("a\n#crc32c=00000000\n")} {
		got, legacy, err := Unseal("f", Seal(p))
		if err != nil || legacy || !bytes.Equal(got, p) {
			t.Errorf("Unseal(Seal(%q)) = %q, %v, %v", p, got, legacy, err)
		}
	}
}

// TestSealDetectsEveryByteFlip flips each bit of a sealed file: every
// change is reported as ErrCorrupt or, for a flip that destroys the
// trailer's prefix, read as a legacy file (whose content the caller
// validates); none reads back as the original payload silently changed.
func TestSealDetectsEveryByteFlip(t *testing.T) {
	payload := []byte(`{"startTimeMs":1767225600000}`)
	sealed := Seal(payload)
	for i := range sealed {
		for bit := 0; bit < 8; bit++ {
			d := bytes.Clone(sealed)
			d[i] ^= 1 << bit
			got, legacy, err := Unseal("f", d)
			switch {
			case err != nil:
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d bit %d: error %v is not ErrCorrupt", i, bit, err)
				}
			case legacy:
				if bytes.Equal(got, payload) {
					t.Fatalf("byte %d bit %d: legacy read equals the payload", i, bit)
				}
			default:
				t.Fatalf("byte %d bit %d: damaged file accepted as %q", i, bit, got)
			}
		}
	}
}

func TestSealedFileLegacy(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "0")
	if err := os.WriteFile(p, []byte(`{"startTimeMs":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSealedFile(p)
	if err != nil || string(got) != `{"startTimeMs":5}` {
		t.Fatalf("legacy file: %q, %v", got, err)
	}
	w := &Writer{NoSync: true}
	q := filepath.Join(dir, "1")
	if err := w.WriteSealedFile(q, []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSealedFile(q); err != nil || string(got) != "x" {
		t.Fatalf("sealed file: %q, %v", got, err)
	}
	if _, err := ReadSealedFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// FuzzUnseal: any bytes either fail with ErrCorrupt, read as legacy (the
// input itself), or are exactly a sealed payload.
func FuzzUnseal(f *testing.F) {
	f.Add(Seal([]byte(`{"startTimeMs":1}`)))
	f.Add([]byte("v1\n{}"))
	f.Add([]byte("\n#crc32c=zzzzzzzz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		payload, legacy, err := Unseal("f", data)
		switch {
		case err != nil:
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
		case legacy:
			if !bytes.Equal(payload, data) {
				t.Fatal("a legacy read changed the data")
			}
		default:
			if !bytes.Equal(Seal(payload), data) {
				t.Fatalf("accepted %q, which is not Seal(%q)", data, payload)
			}
		}
	})
}
