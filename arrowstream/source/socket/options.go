package socket

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Options configure the socket source.
type Options struct {
	// Host and Port to connect to (required).
	Host string
	Port int
	// IncludeTimestamp adds a timestamp column: when the line was read.
	IncludeTimestamp bool
	// MaxBufferedLines bounds the lines held between triggers (default
	// 100000); reading from the connection pauses while it is reached.
	MaxBufferedLines int
	// MaxLineBytes bounds one line (default 1 MiB); a longer line stops
	// the source with an error.
	MaxLineBytes int
	// Logger (default slog.Default()).
	Logger *slog.Logger
}

// OptionKeys are the options ParseOptions reads.
func OptionKeys() []string {
	return []string{"host", "port", "includeTimestamp", "maxBufferedLines"}
}

// ParseOptions reads Spark's socket options (host, port, includeTimestamp)
// and maxBufferedLines. Errors name the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{MaxBufferedLines: 100_000, MaxLineBytes: 1 << 20}
	for k, v := range opts {
		var err error
		switch strings.ToLower(k) {
		case "host":
			o.Host = strings.TrimSpace(v)
		case "port":
			o.Port, err = strconv.Atoi(strings.TrimSpace(v))
			if err == nil && (o.Port <= 0 || o.Port > 65535) {
				err = errors.New("out of range 1..65535")
			}
		case "includetimestamp":
			o.IncludeTimestamp, err = strconv.ParseBool(strings.TrimSpace(v))
		case "maxbufferedlines":
			o.MaxBufferedLines, err = strconv.Atoi(strings.TrimSpace(v))
			if err == nil && o.MaxBufferedLines <= 0 {
				err = errors.New("must be positive")
			}
		default:
			continue
		}
		if err != nil {
			return o, fmt.Errorf("socket: option %s=%q: %w", k, v, err)
		}
	}
	if o.Host == "" {
		return o, fmt.Errorf("socket: option host must be specified")
	}
	if o.Port == 0 {
		return o, fmt.Errorf("socket: option port must be specified")
	}
	return o, nil
}
