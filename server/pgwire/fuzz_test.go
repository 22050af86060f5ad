package pgwire

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// FuzzMessages feeds arbitrary bytes to a connection, after a valid
// startup packet (or in place of one, when the input starts with 0xff),
// and checks that the server answers or closes without panicking, and
// keeps serving.
func FuzzMessages(f *testing.F) {
	fx := startFixture(f, fixtureOpts{pg: func(c *Config) { c.MaxMessageBytes = 1 << 16; c.LoginTimeout = 5 * time.Second }})
	fx.addTable(f, "types_t", typesSchema, typesRecord(fx.mem))
	msg := func(typ byte, body string) []byte {
		out := []byte{typ}
		out = binary.BigEndian.AppendUint32(out, uint32(len(body)+4))
		return append(out, body...)
	}
	f.Add(msg('Q', "SELECT * FROM types_t\x00"))
	f.Add(msg('Q', "SELECT 1; SELECT $1\x00"))
	f.Add(append(msg('P', "s1\x00SELECT id FROM types_t WHERE id = $1\x00\x00\x01\x00\x00\x00\x14"),
		append(msg('B', "\x00s1\x00\x00\x01\x00\x01\x00\x01\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x01"),
			append(msg('E', "\x00\x00\x00\x00\x01"), msg('S', "")...)...)...))
	f.Add(msg('D', "Snope\x00"))
	f.Add(msg('C', "Px\x00"))
	f.Add([]byte{0xff, 0, 0, 0, 8, 4, 210, 22, 47})
	f.Add(msg('X', ""))
	f.Add(msg('Q', "SELECT c.relname, pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_class c JOIN pg_attribute a ON a.attrelid = c.oid WHERE c.relname OPERATOR(pg_catalog.~) '^t' COLLATE pg_catalog.default\x00"))
	f.Add(msg('Q', "SET statement_timeout = '1ms'; SELECT count(*) FROM range(0, 100000) a CROSS JOIN range(0, 100000) b\x00"))
	f.Add(msg('Q', "SUBSCRIBE types_t SINCE EPOCH -1\x00"))
	f.Add(msg('Q', "SELECT \"id\", E'a\\n' FROM types_t WHERE id = ANY(ARRAY[1]) UNION SELECT 1, (SELECT x FROM pg_index)\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		client, srvSide := net.Pipe()
		c := newConn(fx.pg, srvSide)
		if !fx.pg.track(c) {
			t.Skip("server full")
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer fx.pg.untrack(c)
			c.serve()
		}()
		// Drain the server's answers so that its writes never block.
		go func() { _, _ = io.Copy(io.Discard, client) }()
		_ = client.SetDeadline(time.Now().Add(10 * time.Second))
		if len(data) > 0 && data[0] == 0xff {
			_, _ = client.Write(data[1:])
		} else {
			startup := binary.BigEndian.AppendUint32(nil, 0)
			startup = binary.BigEndian.AppendUint32(startup, 196608)
			startup = append(startup, "user\x00fuzz\x00\x00"...)
			binary.BigEndian.PutUint32(startup, uint32(len(startup)))
			_, _ = client.Write(startup)
			_, _ = client.Write(data)
		}
		// Terminate, then wait for the connection to end.
		_, _ = client.Write([]byte{'X', 0, 0, 0, 4})
		client.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("connection did not end")
		}
		if n := fx.pg.panics.Load(); n > 0 {
			t.Fatalf("%d connections panicked", n)
		}
	})
}
