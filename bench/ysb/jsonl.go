package ysb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// JSONLines returns events [lo, hi) as JSON lines, one object per event
// with the benchmark's field names; event_time is an RFC 3339 string with
// microseconds, as event producers usually write it.
func (d *Data) JSONLines(lo, hi int) []byte {
	var b []byte
	for i := lo; i < hi; i++ {
		b = append(b, `{"user_id":"`...)
		b = append(b, d.UserIDs[d.User[i]]...)
		b = append(b, `","page_id":"`...)
		b = append(b, d.PageIDs[d.Page[i]]...)
		b = append(b, `","ad_id":"`...)
		b = append(b, d.AdIDs[d.Ad[i]]...)
		b = append(b, `","ad_type":"`...)
		b = append(b, AdTypes[d.AdType[i]]...)
		b = append(b, `","event_type":"`...)
		b = append(b, EventTypes[d.EventType[i]]...)
		b = append(b, `","event_time":"`...)
		b = time.UnixMicro(d.Time[i]).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z")
		b = append(b, `","ip_address":"`...)
		b = append(b, d.IPs[d.IP[i]]...)
		b = append(b, "\"}\n"...)
	}
	return b
}

// DecodeJSON decodes JSON lines of events into records of the plain
// schema with at most batchRows rows each, owned by the caller. It is the
// decoding step a JSON-fed pipeline pays before any processing (arrow's
// own JSON reader, as a user of arrow/go would call it).
func DecodeJSON(mem memory.Allocator, lines []byte, batchRows int) (recs []arrow.Record, err error) {
	// arrow/go v17's record builder panics on some malformed objects (a
	// non-string key token): turn that into an error, as for any bad input.
	defer func() {
		if r := recover(); r != nil {
			for _, rec := range recs {
				rec.Release()
			}
			recs, err = nil, fmt.Errorf("ysb: JSON lines: malformed input: %v", r)
		}
	}()
	if batchRows <= 0 {
		batchRows = 64 << 10
	}
	rd := array.NewJSONReader(bytes.NewReader(lines), Schema(Plain), array.WithAllocator(mem), array.WithChunk(batchRows))
	defer rd.Release()
	for rd.Next() {
		rec := rd.Record()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		var n int64
		for _, r := range recs {
			n += r.NumRows()
			r.Release()
		}
		return nil, fmt.Errorf("ysb: JSON lines: after %s events: %w", strconv.FormatInt(n, 10), err)
	}
	return recs, nil
}
