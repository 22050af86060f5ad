package server

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestTicketRoundTrip(t *testing.T) {
	e, s := int64(12), int64(-1)
	for _, tk := range []Ticket{
		{Table: "clicks"},
		{Table: "clicks", Epoch: &e},
		{Table: "clicks", Since: &s},
		{Table: "clicks", WithEpoch: true},
		{Query: "SELECT 1"},
		{Count: &e},
	} {
		b, err := tk.Encode()
		if err != nil {
			t.Fatalf("%+v: %v", tk, err)
		}
		if !IsTicket(b) {
			t.Fatalf("%s is not recognised as a ticket", b)
		}
		got, err := DecodeTicket(b)
		tk.Version = TicketVersion
		if err != nil || !reflect.DeepEqual(got, tk) {
			t.Fatalf("%s decoded to %+v, %v", b, got, err)
		}
	}
	if b, _ := TableTicket("t"); string(b) != `{"v":1,"table":"t"}` {
		t.Fatalf("table ticket %s", b)
	}
}

func TestTicketRejects(t *testing.T) {
	for in, want := range map[string]string{
		``:                                "not a valid ticket",
		`{}`:                              "unsupported ticket version 0",
		`{"v":2,"table":"t"}`:             "unsupported ticket version 2",
		`{"v":1}`:                         "exactly one of table, query and count",
		`{"v":1,"table":"t","query":"x"}`: "exactly one of",
		`{"v":1,"table":"t","epoch":1,"since":1}`:             "mutually exclusive",
		`{"v":1,"table":"t","epoch":-1}`:                      "negative epoch",
		`{"v":1,"table":"t","since":-2}`:                      "below -1",
		`{"v":1,"query":"x","epoch":1}`:                       "apply only to table tickets",
		`{"v":1,"table":"t","extra":true}`:                    "unknown field",
		`{"v":1,"table":"t"} {"v":1}`:                         "data after the JSON object",
		`{"v":1,"table":"t","epoch":"1"}`:                     "not a valid ticket",
		"{\"v\":1,\"table\":\"\xff\"}":                        "not valid UTF-8",
		`{"v":1,"table":"` + strings.Repeat("x", 2000) + `"}`: "too long",
	} {
		_, err := DecodeTicket([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeTicket(%.40q) = %v, want %q", in, err, want)
		}
	}
	if _, err := DecodeTicket(bytes.Repeat([]byte(" "), maxTicketBytes+1)); err == nil {
		t.Error("oversized ticket accepted")
	}
	if IsTicket([]byte("\x0a\x2atype.googleapis.com/...")) {
		t.Error("a protobuf Any taken for a JSON ticket")
	}
}

// FuzzDecodeTicket: the decoder never panics, and what it accepts
// re-encodes to a ticket that decodes to the same value.
func FuzzDecodeTicket(f *testing.F) {
	for _, s := range []string{`{"v":1,"table":"t"}`, `{"v":1,"table":"t","since":3,"with_epoch":true}`,
		`{"v":1,"query":"SELECT 1"}`, `{"v":1,"count":0}`, `{"v":1,"table":"t","epoch":9223372036854775807}`, `[]`, `{"v":1e400}`,
		// Every kind: with_epoch alone, since -1 (every retained row),
		// epoch with with_epoch, and the server-made statement tickets.
		`{"v":1,"table":"t","with_epoch":true}`, `{"v":1,"table":"t","since":-1}`, `{"v":1,"table":"t","epoch":0,"with_epoch":true}`,
		`{"v":1,"count":9223372036854775807}`, `{"v":1,"query":"SELECT \"ü\" FROM t"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, err := DecodeTicket(b)
		if err != nil {
			return
		}
		enc, err := tk.Encode()
		if err != nil {
			t.Fatalf("accepted %q but cannot encode %+v: %v", b, tk, err)
		}
		back, err := DecodeTicket(enc)
		if err != nil || !reflect.DeepEqual(back, tk) {
			t.Fatalf("%q -> %+v -> %s -> %+v, %v", b, tk, enc, back, err)
		}
	})
}
