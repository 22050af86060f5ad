package pgwire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/arrowstream/arrowstream/server"
)

const scramMechanism = "SCRAM-SHA-256"

func authFailed(user string) error {
	return &pgError{code: stateInvalidPassword, msg: fmt.Sprintf("password authentication failed for user %q", user)}
}

// authenticate runs the password exchange: SCRAM-SHA-256, or with
// PasswordAuth "password" a cleartext password, only on a TLS connection.
func (c *conn) authenticate(user string) error {
	if c.srv.cfg.PasswordAuth == "password" {
		if !c.isTLS {
			return &pgError{code: stateInvalidAuthSpec, msg: "cleartext password authentication needs a TLS connection: connect with sslmode=require"}
		}
		return c.cleartext(user)
	}
	return c.scram(user)
}

func (c *conn) cleartext(user string) error {
	c.send(&pgproto3.AuthenticationCleartextPassword{})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	pw, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("expected a password message, got %T", msg)}
	}
	if err := c.srv.front.CheckPassword(c.baseCtx, user, pw.Password); err != nil {
		return authFailed(user)
	}
	return nil
}

// scram runs SCRAM-SHA-256 (RFC 5802, RFC 7677) without channel binding.
// For an unknown user the exchange runs to the end on a decoy secret and
// fails like a wrong password.
func (c *conn) scram(user string) error {
	sec, known := c.srv.front.SCRAMSecret(user)
	c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("expected a SASL initial response, got %T", msg)}
	}
	if first.AuthMechanism != scramMechanism {
		return &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("SASL mechanism %q is not offered (want %s)", first.AuthMechanism, scramMechanism)}
	}
	gs2, bare, clientNonce, err := parseClientFirst(string(first.Data))
	if err != nil {
		return err
	}
	nonceBytes := make([]byte, 18)
	if _, err := rand.Read(nonceBytes); err != nil {
		return fmt.Errorf("SCRAM nonce: %w", err)
	}
	nonce := clientNonce + base64.StdEncoding.EncodeToString(nonceBytes)
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(sec.Salt), sec.Iterations)
	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = c.be.Receive()
	if err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("expected a SASL response, got %T", msg)}
	}
	withoutProof, proof, err := parseClientFinal(string(final.Data), gs2, nonce)
	if err != nil {
		return err
	}
	authMessage := bare + "," + serverFirst + "," + withoutProof
	sig := hmacSum(sec.StoredKey, authMessage)
	if len(proof) != len(sig) {
		return authFailed(user)
	}
	clientKey := make([]byte, len(sig))
	for i := range sig {
		clientKey[i] = proof[i] ^ sig[i]
	}
	stored := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(stored[:], sec.StoredKey) != 1 || !known {
		c.srv.log.Warn("login failed", "user", server.LogName(user), "protocol", "postgres")
		return authFailed(user)
	}
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(hmacSum(sec.ServerKey, authMessage)))})
	return nil
}

func hmacSum(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// parseClientFirst splits "gs2-header client-first-bare" and returns the
// header, the bare message and the client nonce.
func parseClientFirst(s string) (gs2, bare, nonce string, err error) {
	bad := func(why string) error {
		return &pgError{code: stateProtocolViolation, msg: "malformed SCRAM client-first-message: " + why}
	}
	// gs2-header: cbind-flag "," [authzid] ","
	flag, rest, ok := strings.Cut(s, ",")
	if !ok {
		return "", "", "", bad("no GS2 header")
	}
	switch {
	case flag == "n", flag == "y":
	case strings.HasPrefix(flag, "p="):
		return "", "", "", &pgError{code: stateFeatureNotSupp, msg: "SCRAM channel binding is not supported: connect with channel_binding=disable or prefer"}
	default:
		return "", "", "", bad("unknown channel binding flag")
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", "", bad("no authorization identity field")
	}
	if authz != "" {
		return "", "", "", &pgError{code: stateFeatureNotSupp, msg: "SCRAM authorization identities are not supported"}
	}
	gs2 = flag + "," + authz + ","
	for _, attr := range strings.Split(bare, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			nonce = v
		}
		if strings.HasPrefix(attr, "m=") {
			return "", "", "", bad("mandatory extensions are not supported")
		}
	}
	if nonce == "" || strings.ContainsAny(nonce, ",") {
		return "", "", "", bad("no client nonce")
	}
	return gs2, bare, nonce, nil
}

// parseClientFinal checks "c=<gs2>,r=<nonce>,p=<proof>" and returns the
// message without the proof and the decoded proof.
func parseClientFinal(s, gs2, nonce string) (string, []byte, error) {
	bad := func(why string) error {
		return &pgError{code: stateProtocolViolation, msg: "malformed SCRAM client-final-message: " + why}
	}
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return "", nil, bad("no proof")
	}
	without, proofB64 := s[:i], s[i+3:]
	var cb, r string
	for _, attr := range strings.Split(without, ",") {
		switch {
		case strings.HasPrefix(attr, "c="):
			cb = attr[2:]
		case strings.HasPrefix(attr, "r="):
			r = attr[2:]
		}
	}
	if cb != base64.StdEncoding.EncodeToString([]byte(gs2)) {
		return "", nil, bad("channel binding data does not match the GS2 header")
	}
	if r != nonce {
		return "", nil, bad("nonce does not match")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil {
		return "", nil, bad("proof is not base64")
	}
	return without, proof, nil
}
