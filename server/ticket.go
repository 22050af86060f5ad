package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// TicketVersion is the version of the ticket format this server writes and
// reads.
const TicketVersion = 1

// maxTicketBytes bounds the tickets the server decodes (a ticket carrying
// a SQL statement is the longest).
const maxTicketBytes = 1 << 20

// Ticket is the content of a plain Flight ticket (and of the statement
// handles of Flight SQL tickets), encoded as a JSON object:
//
//	{"v":1,"table":"clicks"}                   the current snapshot
//	{"v":1,"table":"clicks","epoch":12}        the table as of epoch 12
//	{"v":1,"table":"clicks","since":12}        rows committed after epoch 12
//	{"v":1,"table":"clicks","with_epoch":true} with _epoch and _commit_timestamp columns
//
// Clients may build table tickets themselves. Exactly one of Table, Query
// and Count is set; Epoch, Since and WithEpoch apply to tables. Unknown
// fields and versions are rejected, so that a ticket of a newer format
// fails loudly instead of reading something else. Every table stream
// carries, in its schema metadata under EpochMetadataKey, the latest epoch
// of the snapshot it read: the value to pass as "since" in the next poll.
type Ticket struct {
	// Version must be TicketVersion.
	Version int `json:"v"`
	// Table names a memory-sink table.
	Table string `json:"table,omitempty"`
	// Epoch reads the table as of that epoch (time travel).
	Epoch *int64 `json:"epoch,omitempty"`
	// Since reads the rows committed after that epoch (incremental
	// polling; -1 reads every retained row). Since implies WithEpoch.
	Since *int64 `json:"since,omitempty"`
	// WithEpoch appends the _epoch and _commit_timestamp columns.
	WithEpoch bool `json:"with_epoch,omitempty"`
	// Query is a Flight SQL statement (set by the server in statement
	// tickets).
	Query string `json:"query,omitempty"`
	// Count is the affected row count of a command run by
	// CommandStatementQuery (set by the server).
	Count *int64 `json:"count,omitempty"`
	// Local runs Query over this instance's rows of cluster tables only
	// (the endpoints of a multi-endpoint FlightInfo; cluster.go).
	Local bool `json:"local,omitempty"`
}

// EpochMetadataKey is the schema metadata key of table streams holding
// the latest epoch of the snapshot read (decimal, -1 when none).
const EpochMetadataKey = "arrowstream.epoch"

// IsTicket reports whether b looks like a ticket of this format (a JSON
// object) rather than a Flight SQL command (a protobuf Any, which never
// starts with '{').
func IsTicket(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// Encode returns the ticket's JSON.
func (t Ticket) Encode() ([]byte, error) {
	if t.Version == 0 {
		t.Version = TicketVersion
	}
	if err := t.validate(); err != nil {
		return nil, err
	}
	// No HTML escaping: a statement's '<', '>' and '&' would take six
	// bytes each, and the ticket travels in the FlightInfo.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DecodeTicket parses and validates a ticket. Errors describe what is
// wrong without echoing more than a short prefix of the input.
func DecodeTicket(b []byte) (Ticket, error) { return decodeTicket(b, maxTicketBytes) }

// decodeTicket is DecodeTicket with a size limit.
func decodeTicket(b []byte, limit int) (Ticket, error) {
	if len(b) > limit {
		return Ticket{}, fmt.Errorf("ticket of %d bytes is longer than %d", len(b), limit)
	}
	if !utf8.Valid(b) {
		return Ticket{}, errors.New("ticket is not valid UTF-8 JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var t Ticket
	if err := dec.Decode(&t); err != nil {
		return Ticket{}, fmt.Errorf("ticket %s: not a valid ticket: %w", excerpt(b), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Ticket{}, fmt.Errorf("ticket %s: data after the JSON object", excerpt(b))
	}
	if t.Version != TicketVersion {
		return Ticket{}, fmt.Errorf("ticket %s: unsupported ticket version %d (this server reads version %d)", excerpt(b), t.Version, TicketVersion)
	}
	if err := t.validate(); err != nil {
		return Ticket{}, fmt.Errorf("ticket %s: %w", excerpt(b), err)
	}
	return t, nil
}

func (t Ticket) validate() error {
	kinds := 0
	if t.Table != "" {
		kinds++
	}
	if t.Query != "" {
		kinds++
	}
	if t.Count != nil {
		kinds++
	}
	switch {
	case t.Version != TicketVersion:
		return fmt.Errorf("unsupported ticket version %d", t.Version)
	case kinds != 1:
		return errors.New("a ticket names exactly one of table, query and count")
	case t.Local && t.Query == "":
		return errors.New("local applies only to query tickets")
	case t.Table == "" && (t.Epoch != nil || t.Since != nil || t.WithEpoch):
		return errors.New("epoch, since and with_epoch apply only to table tickets")
	case t.Epoch != nil && t.Since != nil:
		return errors.New("epoch and since are mutually exclusive")
	case t.Epoch != nil && *t.Epoch < 0:
		return fmt.Errorf("negative epoch %d", *t.Epoch)
	case t.Since != nil && *t.Since < -1:
		return fmt.Errorf("since %d is below -1", *t.Since)
	case len(t.Table) > 1024:
		return fmt.Errorf("table name of %d bytes is too long", len(t.Table))
	case t.Count != nil && *t.Count < 0:
		return fmt.Errorf("negative count %d", *t.Count)
	}
	return nil
}

// excerpt quotes the start of a ticket for error messages.
func excerpt(b []byte) string {
	const n = 64
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// TableTicket returns the encoded ticket of a table's current snapshot.
func TableTicket(table string) ([]byte, error) {
	return Ticket{Version: TicketVersion, Table: table}.Encode()
}

// SinceTicket returns the encoded ticket of the rows of table committed
// after epoch.
func SinceTicket(table string, epoch int64) ([]byte, error) {
	return Ticket{Version: TicketVersion, Table: table, Since: &epoch}.Encode()
}

// AsOfTicket returns the encoded ticket of table as of epoch.
func AsOfTicket(table string, epoch int64) ([]byte, error) {
	return Ticket{Version: TicketVersion, Table: table, Epoch: &epoch}.Encode()
}
