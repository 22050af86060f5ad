package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestPreparedStatementsPerUser: one user cannot take every prepared
// statement slot of the server (nor hold unbounded statement text) and so
// refuse prepared statements to the others. Through the Flight SQL client:
// alice asks for as many statements as the whole server holds and gets her
// share, each refusal naming the per-user quota and its flag; bob still
// prepares and runs his; closing one of alice's gives her a slot back; the
// SQL text her statements hold is bounded too.
func TestPreparedStatementsPerUser(t *testing.T) {
	const serverMax, perUser = 8, 3
	const textBytes = 64 << 10
	f := newSQLFixture(t, Config{
		Auth: AuthConfig{Users: map[string]string{"alice": "a", "bob": "b"}},
		Limits: Limits{MaxPreparedStatements: serverMax, MaxPreparedStatementsPerUser: perUser,
			MaxPreparedBytesPerUser: textBytes},
	})
	cl := sqlClient(t, f.srv)
	login := func(user, pw string) context.Context {
		ctx, err := cl.Client.AuthenticateBasicToken(context.Background(), user, pw)
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
	alice, bob := login("alice", "a"), login("bob", "b")

	var mine []*flightsql.PreparedStatement
	refused := 0
	for range serverMax {
		ps, err := cl.Prepare(alice, "SELECT * FROM orders")
		if err != nil {
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-prepared-statements-per-user") ||
				!strings.Contains(err.Error(), `user "alice"`) {
				t.Fatalf("alice's statement %d: %v, want ResourceExhausted naming the per-user quota", len(mine)+refused, err)
			}
			refused++
			continue
		}
		mine = append(mine, ps)
	}
	if len(mine) != perUser || refused != serverMax-perUser {
		t.Fatalf("alice got %d statements (%d refused), want %d", len(mine), refused, perUser)
	}
	// Bob is served: his statements prepare and run.
	for i := range perUser {
		ps, err := cl.Prepare(bob, "SELECT * FROM orders")
		if err != nil {
			t.Fatalf("bob's statement %d refused while alice holds her share: %v", i, err)
		}
		info, err := ps.Execute(bob)
		if err != nil {
			t.Fatal(err)
		}
		if err := drainInfo(bob, cl, info); err != nil {
			t.Fatal(err)
		}
		if err := ps.Close(bob); err != nil {
			t.Fatal(err)
		}
	}
	// A closed statement gives its slot back.
	if err := mine[0].Close(alice); err != nil {
		t.Fatal(err)
	}
	mine = mine[1:]
	ps, err := cl.Prepare(alice, "SELECT * FROM orders")
	if err != nil {
		t.Fatalf("after a close: %v", err)
	}
	mine = append(mine, ps)
	for _, ps := range mine {
		if err := ps.Close(alice); err != nil {
			t.Fatal(err)
		}
	}

	// The text: two statements of 30 KB fit under 64 KiB, a third does not.
	padded := "SELECT * FROM orders" + strings.Repeat(" ", 30_000)
	var big []*flightsql.PreparedStatement
	for range 2 {
		ps, err := cl.Prepare(alice, padded)
		if err != nil {
			t.Fatal(err)
		}
		big = append(big, ps)
	}
	_, err = cl.Prepare(alice, padded)
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-prepared-bytes-per-user") {
		t.Fatalf("third 30 KB statement: %v, want ResourceExhausted naming --max-prepared-bytes-per-user", err)
	}
	if _, err := cl.Prepare(bob, padded); err != nil {
		t.Fatalf("bob's text is his own: %v", err)
	}
	for _, ps := range big {
		if err := ps.Close(alice); err != nil {
			t.Fatal(err)
		}
	}
	if ps, err := cl.Prepare(alice, padded); err != nil {
		t.Fatalf("after closing: %v", err)
	} else {
		ps.Close(alice)
	}
}

// TestPreparedStoreUserAccounting: a user's count and bytes come back when
// statements are closed or expire idle, and stay per user.
func TestPreparedStoreUserAccounting(t *testing.T) {
	now := time.Unix(0, 0)
	st := newPreparedStore(100, time.Minute).withUserBounds(2, 10)
	st.now = func() time.Time { return now }
	a := &prepared{user: "u", sql: "12345"}
	if err := st.add(a); err != nil {
		t.Fatal(err)
	}
	wantCode(t, st.add(&prepared{user: "u", sql: "123456"}), codes.ResourceExhausted) // 11 bytes
	if err := st.add(&prepared{user: "v", sql: "1234567890"}); err != nil {
		t.Fatalf("another user's bytes: %v", err)
	}
	if err := st.add(&prepared{user: "u", sql: "12345"}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, st.add(&prepared{user: "u", sql: ""}), codes.ResourceExhausted) // 2 statements
	if err := st.remove([]byte(a.handle), "u"); err != nil {
		t.Fatal(err)
	}
	if err := st.add(&prepared{user: "u", sql: "1"}); err != nil {
		t.Fatalf("after a close: %v", err)
	}
	now = now.Add(2 * time.Minute) // everything idles out
	if err := st.add(&prepared{user: "u", sql: "1234567890"}); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if got := st.users["u"]; got != (preparedUse{n: 1, bytes: 10}) || len(st.users) != 1 {
		t.Fatalf("use after expiry: %+v (%d users)", got, len(st.users))
	}
}
