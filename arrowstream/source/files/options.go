package files

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Format is a file format the connector reads.
type Format string

// The formats.
const (
	CSV     Format = "csv"
	JSON    Format = "json"
	Parquet Format = "parquet"
	Arrow   Format = "arrow"
)

// Mode says what happens to a malformed CSV or JSON record.
type Mode string

// The modes (Spark's).
const (
	// Permissive keeps the record with every column null and, when the
	// schema has the columnNameOfCorruptRecord column, the raw line there.
	Permissive Mode = "PERMISSIVE"
	// DropMalformed skips the record.
	DropMalformed Mode = "DROPMALFORMED"
	// FailFast stops the query with an error naming file, line and column.
	FailFast Mode = "FAILFAST"
)

// CleanSource says what happens to a source file once the epoch that read
// it is committed.
type CleanSource string

// The cleanSource values (Spark's).
const (
	CleanOff     CleanSource = "off"
	CleanArchive CleanSource = "archive"
	CleanDelete  CleanSource = "delete"
)

// Options are the source options (Spark's names; keys are matched without
// regard to case).
type Options struct {
	Format             Format
	Path               string        // directory, file or glob
	MaxFilesPerTrigger int           // 0: no limit
	MaxBytesPerTrigger int64         // 0: no limit
	LatestFirst        bool          // newest files first
	MaxFileAge         time.Duration // relative to the newest file seen (default 7 days)
	CleanSource        CleanSource
	SourceArchiveDir   string
	Mode               Mode
	CorruptColumn      string // columnNameOfCorruptRecord (default _corrupt_record)
	Header             bool   // CSV: the first line of every file names the columns
	InferSchema        bool   // CSV: infer column types (else strings)
	Sep                rune   // CSV separator (default ',')
	NullValue          string // CSV: the text of a null (default empty)
	ChunkBytes         int    // CSV/JSON bytes decoded per arrow reader call (default 1 MiB; whole lines)
	// Confine, when set, vets each file a listing finds (a server's data
	// directories: see arrowstream.Session.Access).
	Confine func(path string) error
}

// DefaultChunkBytes is how much CSV/JSON text one arrow reader call
// decodes (extended to the end of a line): big enough to amortise the
// reader's setup, small enough to keep a record's memory modest.
const DefaultChunkBytes = 1 << 20

// SourceOptionKeys are the options ParseOptions reads (the same for every
// file format; CSV-only ones are ignored by the others).
func SourceOptionKeys() []string {
	return []string{"path", "maxFilesPerTrigger", "maxBytesPerTrigger", "latestFirst", "maxFileAge", "cleanSource",
		"sourceArchiveDir", "mode", "columnNameOfCorruptRecord", "header", "inferSchema", "sep", "delimiter",
		"nullValue", "chunkBytes", "checkpointLocation", "queryName"}
}

// ParseOptions parses source options for format.
func ParseOptions(format Format, opts map[string]string) (Options, error) {
	o := Options{
		Format: format, MaxFileAge: 7 * 24 * time.Hour, CleanSource: CleanOff, Mode: Permissive,
		CorruptColumn: "_corrupt_record", Sep: ',', ChunkBytes: DefaultChunkBytes,
	}
	for k, v := range opts {
		var err error
		switch strings.ToLower(k) {
		case "path":
			o.Path = v
		case "maxfilespertrigger":
			o.MaxFilesPerTrigger, err = positiveInt(v)
		case "maxbytespertrigger":
			var n int
			n, err = positiveInt(v)
			o.MaxBytesPerTrigger = int64(n)
		case "latestfirst":
			o.LatestFirst, err = strconv.ParseBool(v)
		case "maxfileage":
			o.MaxFileAge, err = parseAge(v)
		case "cleansource":
			o.CleanSource = CleanSource(strings.ToLower(v))
			if o.CleanSource != CleanOff && o.CleanSource != CleanArchive && o.CleanSource != CleanDelete {
				err = fmt.Errorf("want archive, delete or off")
			}
		case "sourcearchivedir":
			o.SourceArchiveDir = v
		case "mode":
			o.Mode = Mode(strings.ToUpper(v))
			if o.Mode != Permissive && o.Mode != DropMalformed && o.Mode != FailFast {
				err = fmt.Errorf("want PERMISSIVE, DROPMALFORMED or FAILFAST")
			}
		case "columnnameofcorruptrecord":
			o.CorruptColumn = v
		case "header":
			o.Header, err = strconv.ParseBool(v)
		case "inferschema":
			o.InferSchema, err = strconv.ParseBool(v)
		case "sep", "delimiter":
			r := []rune(v)
			if len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
				err = fmt.Errorf("want one character other than a quote or a line break")
			} else {
				o.Sep = r[0]
			}
		case "nullvalue":
			o.NullValue = v
		case "chunkbytes":
			o.ChunkBytes, err = positiveInt(v)
		case "checkpointlocation", "queryname":
			// Writer options that may reach a source through shared maps.
		default:
			err = fmt.Errorf("unknown option")
		}
		if err != nil {
			return Options{}, fmt.Errorf("files: %s source option %s=%q: %w", format, k, v, err)
		}
	}
	if o.Path == "" {
		return Options{}, fmt.Errorf("files: %s source: option path is required", format)
	}
	if o.CleanSource == CleanArchive && o.SourceArchiveDir == "" {
		return Options{}, fmt.Errorf("files: %s source: cleanSource=archive needs the sourceArchiveDir option", format)
	}
	return o, nil
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return n, nil
}

// parseAge reads Spark's durations: "7d", "12h", "30m", "10s" (and Go's
// forms, such as 1h30m).
func parseAge(v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	if d, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("want a duration such as 7d or 12h")
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 7d or 12h")
	}
	return d, nil
}
