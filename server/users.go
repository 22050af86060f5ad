package server

import (
	"bufio"
	"bytes"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Password hashes have the form pbkdf2-sha256$<iterations>$<salt>$<key>
// (salt and key in unpadded standard base64). Anything else is a plain
// password.
const (
	hashPrefix      = "pbkdf2-sha256$"
	hashIterations  = 600_000 // OWASP's 2023 figure for PBKDF2-HMAC-SHA256
	hashKeyBytes    = 32
	maxHashIters    = 10_000_000
	maxUsersFileLen = 1 << 20
)

// HashPassword returns a salted PBKDF2-SHA256 hash of password for a users
// file or AuthConfig.Users, so that the file holds no plain passwords.
func HashPassword(password string) (string, error) {
	return hashPassword(password, hashIterations)
}

func hashPassword(password string, iters int) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("server: hash password: %w", err)
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, iters, hashKeyBytes)
	if err != nil {
		return "", fmt.Errorf("server: hash password: %w", err)
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("%s%d$%s$%s", hashPrefix, iters, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// credential is one user's stored secret.
type credential struct {
	plain []byte // sha256 of a plain password
	iters int    // > 0: a PBKDF2 hash
	salt  []byte
	key   []byte
	// scram is the SCRAM-SHA-256 secret (the PostgreSQL endpoint's
	// password exchange), nil when none can be derived.
	scram *SCRAMSecret
}

func parseCredential(user, secret string) (credential, error) {
	if !strings.HasPrefix(secret, hashPrefix) {
		sum := sha256.Sum256([]byte(secret))
		sc, err := newSCRAMSecret(secret)
		if err != nil {
			return credential{}, fmt.Errorf("user %q: %w", user, err)
		}
		return credential{plain: sum[:], scram: sc}, nil
	}
	parts := strings.Split(strings.TrimPrefix(secret, hashPrefix), "$")
	if len(parts) != 3 {
		return credential{}, fmt.Errorf("user %q: malformed password hash (want %s<iterations>$<salt>$<key>)", user, hashPrefix)
	}
	iters, err := strconv.Atoi(parts[0])
	if err != nil || iters < 1 || iters > maxHashIters {
		return credential{}, fmt.Errorf("user %q: bad iteration count %q in password hash", user, parts[0])
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[1])
	key, err2 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || len(key) == 0 {
		return credential{}, fmt.Errorf("user %q: bad base64 in password hash", user)
	}
	c := credential{iters: iters, salt: salt, key: key}
	if len(key) == scramKeyBytes {
		// A PBKDF2-HMAC-SHA256 key of 32 bytes is SCRAM's SaltedPassword.
		c.scram = scramFromSalted(salt, iters, key)
	}
	return c, nil
}

// matches compares password with the stored secret in constant time.
func (c credential) matches(password string) bool {
	if c.iters > 0 {
		got, err := pbkdf2.Key(sha256.New, password, c.salt, c.iters, len(c.key))
		return err == nil && subtle.ConstantTimeCompare(got, c.key) == 1
	}
	// Comparing digests keeps the time independent of the lengths too.
	sum := sha256.Sum256([]byte(password))
	return subtle.ConstantTimeCompare(sum[:], c.plain) == 1
}

// loadUsers merges cfg.Users and the lines of cfg.UsersFile; it returns
// the users and the file's read grants (nil when it has none).
func loadUsers(cfg AuthConfig) (map[string]credential, map[string][]string, error) {
	out := map[string]credential{}
	for u, p := range cfg.Users {
		if u == "" || strings.ContainsRune(u, ':') {
			return nil, nil, fmt.Errorf("server: user name %q: empty or contains ':'", u)
		}
		c, err := parseCredential(u, p)
		if err != nil {
			return nil, nil, fmt.Errorf("server: %w", err)
		}
		out[u] = c
	}
	if cfg.UsersFile == "" {
		return out, nil, nil
	}
	data, err := os.ReadFile(cfg.UsersFile)
	if err != nil {
		return nil, nil, fmt.Errorf("server: users file: %w", err)
	}
	grants, err := parseUsersFile(cfg.UsersFile, data, out)
	if err != nil {
		return nil, nil, err
	}
	return out, grants, nil
}

// grantPrefix starts a grant line of a users file.
const grantPrefix = "grant "

// parseUsersFile reads "user:secret" lines and "grant user=table[,...]"
// lines (the syntax of --grant; a grant line has no ':'); blank lines and
// lines starting with '#' are skipped. A grant must name a user of out
// (the file's or AuthConfig.Users). It returns the grants, nil when there
// are none. Errors name the file and line, never the secret.
func parseUsersFile(name string, data []byte, out map[string]credential) (map[string][]string, error) {
	grants, err := parseUsersLines(name, data, out)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		if _, ok := out[g.user]; !ok {
			return nil, fmt.Errorf("server: users file %s:%d: grant for unknown user %q", name, g.line, g.user)
		}
	}
	if len(grants) == 0 {
		return nil, nil
	}
	merged := map[string][]string{}
	for _, g := range grants {
		merged[g.user] = append(merged[g.user], g.tables...)
	}
	return merged, nil
}

// fileGrant is one grant line of a users file.
type fileGrant struct {
	line   int
	user   string
	tables []string
}

func parseUsersLines(name string, data []byte, out map[string]credential) ([]fileGrant, error) {
	if len(data) > maxUsersFileLen {
		return nil, fmt.Errorf("server: users file %s: larger than %d bytes", name, maxUsersFileLen)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxUsersFileLen)
	n := 0
	var grants []fileGrant
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, grantPrefix); ok && !strings.Contains(line, ":") {
			g, err := ParseGrants([]string{rest})
			if err != nil {
				return nil, fmt.Errorf("server: users file %s:%d: %w", name, n, err)
			}
			if len(g) != 1 || strings.Contains(rest, ";") {
				return nil, fmt.Errorf("server: users file %s:%d: a grant line grants one user: grant user=table[,table...]", name, n)
			}
			for user, tables := range g {
				grants = append(grants, fileGrant{line: n, user: user, tables: tables})
			}
			continue
		}
		user, secret, ok := strings.Cut(line, ":")
		user = strings.TrimSpace(user)
		if !ok || user == "" || secret == "" {
			return nil, fmt.Errorf("server: users file %s:%d: want user:password (or grant user=table[,table...])", name, n)
		}
		c, err := parseCredential(user, secret)
		if err != nil {
			return nil, fmt.Errorf("server: users file %s:%d: %w", name, n, err)
		}
		if _, dup := out[user]; dup {
			return nil, fmt.Errorf("server: users file %s:%d: user %q defined twice", name, n, user)
		}
		out[user] = c
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("server: users file %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, errors.New("server: users file " + name + ": no users")
	}
	return grants, nil
}

// mergeGrants is the union of two grant maps (nil when both are nil).
func mergeGrants(a, b map[string][]string) map[string][]string {
	if a == nil && b == nil {
		return nil
	}
	out := map[string][]string{}
	for _, m := range []map[string][]string{a, b} {
		for user, tables := range m {
			out[user] = append(out[user], tables...)
		}
	}
	return out
}
