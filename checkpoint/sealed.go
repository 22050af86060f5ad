package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Small checkpoint files that are not logs (a source's start time or
// initial offsets, a state schema) are sealed: the payload is followed by
// a trailer line "#crc32c=<8 hex digits>\n" holding the CRC-32C of the
// payload, so that a damaged byte is reported by name (ErrCorrupt) instead
// of being read as a different value. Files written before sealing existed
// have no trailer and are read as they are.

const sealPrefix = "\n#crc32c="

// Seal appends the checksum trailer to payload.
func Seal(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+len(sealPrefix)+9)
	out = append(out, payload...)
	out = append(out, sealPrefix...)
	out = fmt.Appendf(out, "%08x\n", crc32c(payload))
	return out
}

// Unseal checks the trailer of a sealed file and returns its payload.
// legacy is true for a file without a trailer (written by an older build),
// whose payload is data itself; the caller should then validate the
// content as strictly as it can. path names the file in errors.
func Unseal(path string, data []byte) (payload []byte, legacy bool, err error) {
	i := bytes.LastIndex(data, []byte(sealPrefix))
	if i < 0 {
		return data, true, nil
	}
	trailer := data[i+len(sealPrefix):]
	if len(trailer) != 9 || trailer[8] != '\n' {
		return nil, false, fmt.Errorf("checkpoint: %s: malformed checksum trailer: %w", path, ErrCorrupt)
	}
	want, perr := strconv.ParseUint(string(trailer[:8]), 16, 32)
	if perr != nil || !lowerHex(trailer[:8]) {
		return nil, false, fmt.Errorf("checkpoint: %s: malformed checksum trailer: %w", path, ErrCorrupt)
	}
	payload = data[:i]
	if got := crc32c(payload); got != uint32(want) {
		return nil, false, fmt.Errorf("checkpoint: %s: checksum mismatch (stored %08x, computed %08x): %w", path, want, got, ErrCorrupt)
	}
	return payload, false, nil
}

// WriteSealedFile writes payload sealed (see Seal) with WriteFile's
// atomicity.
func (w *Writer) WriteSealedFile(path string, payload []byte, overwrite bool) error {
	return w.WriteFile(path, Seal(payload), overwrite)
}

// ReadSealedFile reads a sealed file (or a legacy one without trailer)
// and returns its payload. A missing file gives an error satisfying
// errors.Is(err, os.ErrNotExist).
func ReadSealedFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	payload, _, err := Unseal(path, data)
	return payload, err
}

// lowerHex reports whether b holds only the digits Seal writes (so that a
// flipped case bit is not read as the same checksum).
func lowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
