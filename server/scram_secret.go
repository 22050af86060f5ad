package server

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// scramKeyBytes is the length of SCRAM-SHA-256's SaltedPassword.
const scramKeyBytes = sha256.Size

// scramPlainIterations is the iteration count of the SCRAM secret derived
// from a plain password (PostgreSQL's default).
const scramPlainIterations = 4096

// SCRAMSecret is what a server keeps to verify a SCRAM-SHA-256 login
// (RFC 5802, RFC 7677) without the password: the salt and iteration count
// the client derives its key with, StoredKey = H(HMAC(SaltedPassword,
// "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server Key"). A
// PBKDF2-SHA256 hash of a users file is SaltedPassword itself, so hashed
// users log in with SCRAM too.
type SCRAMSecret struct {
	Salt       []byte
	Iterations int
	StoredKey  []byte
	ServerKey  []byte
}

func newSCRAMSecret(password string) (*SCRAMSecret, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("SCRAM salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramPlainIterations, scramKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("SCRAM key: %w", err)
	}
	return scramFromSalted(salt, scramPlainIterations, salted), nil
}

func scramFromSalted(salt []byte, iters int, salted []byte) *SCRAMSecret {
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return &SCRAMSecret{Salt: salt, Iterations: iters, StoredKey: stored[:], ServerKey: hmacSHA256(salted, "Server Key")}
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
