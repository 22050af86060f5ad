package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	authHeader = "authorization"
	// maxTokens bounds the live tokens; a login beyond it evicts the
	// token closest to expiry.
	maxTokens = 100_000
	// maxConcurrentLogins bounds the password checks running at once
	// (PBKDF2 is deliberately expensive).
	maxConcurrentLogins = 4
)

type userKey struct{}

// UserFromContext returns the authenticated user of a call ("" without
// authentication). Engines receive it in Request.User as well.
func UserFromContext(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

type session struct {
	user    string
	expires time.Time
}

// authenticator checks basic-auth logins and the bearer tokens it issues.
// Tokens are stored by their SHA-256 so that a map lookup does not leak
// timing about secret bytes.
type authenticator struct {
	users map[string]credential
	// fileGrants are the grant lines of the users file (nil: none); they
	// add to AuthConfig.ReadGrants.
	fileGrants map[string][]string
	dummy      credential // compared for unknown users, to hide who exists
	ttl        time.Duration
	log        *slog.Logger
	logins     chan struct{}

	mu     sync.Mutex
	now    func() time.Time // read under mu (tests replace it)
	tokens map[[32]byte]session
}

func newAuthenticator(cfg AuthConfig, log *slog.Logger) (*authenticator, error) {
	users, fileGrants, err := loadUsers(cfg)
	if err != nil {
		return nil, err
	}
	a := &authenticator{users: users, fileGrants: fileGrants, ttl: cfg.TokenTTL, now: time.Now, log: log,
		logins: make(chan struct{}, maxConcurrentLogins), tokens: map[[32]byte]session{}}
	a.dummy, _ = parseCredential("", "dummy")
	for _, c := range users {
		if c.iters > 0 {
			a.dummy = credential{iters: c.iters, salt: c.salt, key: make([]byte, len(c.key))}
			break
		}
	}
	return a, nil
}

// login checks a user's password and issues a token.
func (a *authenticator) login(ctx context.Context, user, password string) (string, error) {
	select {
	case a.logins <- struct{}{}:
		defer func() { <-a.logins }()
	case <-ctx.Done():
		return "", status.FromContextError(ctx.Err()).Err()
	}
	c, ok := a.users[user]
	if !ok {
		c = a.dummy
	}
	if !c.matches(password) || !ok {
		a.log.Warn("login failed", "user", LogName(user))
		return "", status.Error(codes.Unauthenticated, "invalid user name or password")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", status.Errorf(codes.Internal, "issue token: %v", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.tokens) >= maxTokens {
		a.evictLocked(now)
	}
	a.tokens[sha256.Sum256([]byte(tok))] = session{user: user, expires: now.Add(a.ttl)}
	a.log.Info("login", "user", user)
	return tok, nil
}

// evictLocked drops expired tokens, and the one closest to expiry if none
// has expired.
func (a *authenticator) evictLocked(now time.Time) {
	var oldest [32]byte
	var oldestExp time.Time
	for k, s := range a.tokens {
		if !s.expires.After(now) {
			delete(a.tokens, k)
			continue
		}
		if oldestExp.IsZero() || s.expires.Before(oldestExp) {
			oldest, oldestExp = k, s.expires
		}
	}
	if len(a.tokens) >= maxTokens {
		delete(a.tokens, oldest)
	}
}

// check validates a bearer token and returns its user.
func (a *authenticator) check(tok string) (string, bool) {
	key := sha256.Sum256([]byte(tok))
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.tokens[key]
	if !ok {
		return "", false
	}
	if !s.expires.After(a.now()) {
		delete(a.tokens, key)
		return "", false
	}
	return s.user, true
}

// fromMetadata authenticates a call by its "authorization: Bearer" header.
func (a *authenticator) fromMetadata(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(authHeader)
	if len(vals) == 0 {
		return nil, status.Error(codes.Unauthenticated, "authentication required: log in with a Handshake (basic auth) and send the bearer token it returns")
	}
	scheme, tok, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, status.Error(codes.Unauthenticated, "authentication required: expected an \"authorization: Bearer <token>\" header")
	}
	user, ok := a.check(strings.TrimSpace(tok))
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "invalid or expired token: log in again")
	}
	return context.WithValue(ctx, userKey{}, user), nil
}

// handshake serves Flight's Handshake: basic credentials in the
// "authorization" header are exchanged for a bearer token, returned in
// the "authorization" response header (how the Go, C++, Java and ADBC
// clients' AuthenticateBasicToken expect it).
func (a *authenticator) handshake(stream flight.FlightService_HandshakeServer) error {
	ctx := stream.Context()
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(authHeader)
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, "handshake: no credentials: send \"authorization: Basic <base64 user:password>\"")
	}
	scheme, cred, _ := strings.Cut(vals[0], " ")
	if strings.EqualFold(scheme, "Bearer") {
		if _, err := a.fromMetadata(ctx); err != nil {
			return err
		}
		return stream.SendHeader(metadata.Pairs(authHeader, vals[0]))
	}
	if !strings.EqualFold(scheme, "Basic") {
		return status.Errorf(codes.Unauthenticated, "handshake: unsupported authorization scheme %q (want Basic)", scheme)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(cred))
	}
	if err != nil {
		return status.Error(codes.Unauthenticated, "handshake: basic credentials are not valid base64")
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return status.Error(codes.Unauthenticated, "handshake: basic credentials must be user:password")
	}
	tok, err := a.login(ctx, user, password)
	if err != nil {
		return err
	}
	return stream.SendHeader(metadata.Pairs(authHeader, "Bearer "+tok))
}

// unary and stream are the interceptors that require a valid token on
// every call but Handshake.
func (a *authenticator) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, err := a.fromMetadata(ctx)
	if err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (a *authenticator) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if strings.HasSuffix(info.FullMethod, "/Handshake") {
		return h(srv, ss)
	}
	ctx, err := a.fromMetadata(ss.Context())
	if err != nil {
		return err
	}
	return h(srv, &ctxStream{ServerStream: ss, ctx: ctx})
}

// ctxStream replaces a stream's context.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }
