package checkpoint

// EncodeEntry frames body in the checksummed format of the metadata logs
// (a version line, the body, a crc32c line), for small checkpoint files
// that live outside a Log, such as a source's private metadata.
func EncodeEntry(body []byte) []byte { return encodeEntry(body) }

// DecodeEntry checks a file written with EncodeEntry and returns its body;
// a damaged file gives an error wrapping ErrCorrupt that names path.
func DecodeEntry(path string, data []byte) ([]byte, error) { return decodeEntry(path, data) }
