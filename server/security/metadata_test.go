package security

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// basicHeader is the value of an "authorization" header with basic
// credentials.
func basicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// rawHandshake opens a plain HTTP/2 connection to the Flight port and
// starts one Handshake call whose authorization header holds value, the
// way a client that ignores the server's SETTINGS would; it returns the
// first frame that ends the call: an RST_STREAM, a GOAWAY, or the
// response's HEADERS (nil when the connection just closed).
func rawHandshake(t *testing.T, addr, value string) http2.Frame {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Minute))
	bw := bufio.NewWriterSize(conn, 64<<10)
	bw.WriteString(http2.ClientPreface)
	// One framer writes, another reads: a Framer is not safe for
	// concurrent use.
	fr, rd := http2.NewFramer(bw, nil), http2.NewFramer(nil, conn)
	fr.WriteSettings()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/arrow.flight.protocol.FlightService/Handshake"},
		{Name: ":authority", Value: addr}, {Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"}, {Name: "authorization", Value: value},
	} {
		enc.WriteField(f)
	}
	// The frames are written while the server reads them: a concurrent
	// reader takes the server's answers so that neither side blocks (the
	// server's SETTINGS are not acknowledged: it does not wait for that).
	frames := make(chan http2.Frame, 1)
	go func() {
		defer close(frames)
		for {
			f, err := rd.ReadFrame()
			if err != nil {
				return
			}
			switch f.(type) {
			case *http2.RSTStreamFrame, *http2.GoAwayFrame, *http2.HeadersFrame:
				frames <- f
				return
			}
		}
	}()
	b := block.Bytes()
	const chunk = 16 << 10
	first := min(chunk, len(b))
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:first], EndHeaders: first == len(b)}); err == nil {
		for off := first; off < len(b) && err == nil; off += chunk {
			end := min(off+chunk, len(b))
			err = fr.WriteContinuation(1, end == len(b), b[off:end])
		}
	}
	bw.Flush()
	return <-frames
}

// TestHugeHandshakeMetadata is the gRPC metadata of one call, and the
// user name of a failed login in it, as large as an unauthenticated client
// likes (found in session 37): gRPC's default header limit of 16 MiB let 32
// Handshakes with an 8 MiB user name raise the server's resident set by
// 178 MiB and write 268 MB of log, each failed login's user name logged
// whole. Now a call's metadata is bounded by server.DefaultMaxHeaderBytes
// (64 KiB), which the server announces: the Go client refuses to send more,
// naming the limit, and a client that sends anyway has its call reset
// before the metadata is kept. A failed login logs at most
// server.MaxLoggedNameBytes of the user name.
func TestHugeHandshakeMetadata(t *testing.T) {
	e := startServe(t)
	pid := e.cmd.Process.Pid
	base := restingRSS(t, pid)
	hwm := watchRSS(t, pid)
	logBefore := len(e.output())

	huge := basicHeader(strings.Repeat("u", 8<<20), "x")
	var wg sync.WaitGroup
	var mu sync.Mutex
	ends := map[string]int{}
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := rawHandshake(t, e.flight, huge)
			what := "connection closed"
			switch f := f.(type) {
			case *http2.RSTStreamFrame:
				what = "RST_STREAM " + f.ErrCode.String()
			case *http2.GoAwayFrame:
				what = "GOAWAY " + f.ErrCode.String()
			case *http2.HeadersFrame:
				what = "answered"
			}
			mu.Lock()
			ends[what]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("32 raw handshakes with an 8 MiB authorization header ended: %v", ends)
	if ends["answered"] > 0 {
		t.Errorf("%d handshakes with 8 MiB of metadata were served, want every one reset", ends["answered"])
	}
	hwm.end(t, "32 handshakes with 8 MiB of metadata", base)
	if w := hwm.peak.Load(); w > base+64<<20 {
		t.Errorf("the server's RSS rose from %d to %d MiB for 32 refused handshakes, want under +64 MiB", base>>20, w>>20)
	}

	// The real client, connected (it has the server's SETTINGS), refuses
	// to send the metadata and names the limit.
	conn, err := grpc.NewClient(e.flight, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fc := flight.NewFlightServiceClient(conn)
	call := func(value string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s, err := fc.Handshake(metadata.AppendToOutgoingContext(ctx, "authorization", value))
		if err == nil {
			_, err = s.Recv()
		}
		return err
	}
	refused(t, "wrong password", call(basicHeader(adminUser, "wrong")), codes.Unauthenticated, "invalid user name or password")
	refused(t, "8 MiB of metadata", call(huge), codes.Internal, "header list size", "65536")

	// A long user name under the limit: refused, and logged shortened.
	long := strings.Repeat("n", 40<<10)
	refused(t, "40 KiB user name", call(basicHeader(long, "x")), codes.Unauthenticated, "invalid user name or password")
	waitFor(t, "the failed logins logged", func() bool { return strings.Count(e.output()[logBefore:], "login failed") >= 2 })
	for _, line := range strings.Split(e.output()[logBefore:], "\n") {
		if strings.Contains(line, "login failed") && len(line) > 1024 {
			t.Errorf("a failed login logged a line of %d bytes: %s", len(line), short(line))
		}
	}
	if n := len(e.output()) - logBefore; n > 64<<10 {
		t.Errorf("the refused handshakes wrote %d bytes of log, want under 64 KiB", n)
	}
	if !strings.Contains(e.output()[logBefore:], "more bytes]") {
		t.Errorf("the 40 KiB user name's failed login is not logged shortened:\n%s", short(e.output()[logBefore:]))
	}
	e.alive(t)
}
