package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/arrowstream/arrowstream/server"
)

// webAuth puts the HTTP UI, API and /metrics behind the users, tokens and
// read grants of the Flight SQL server (one server.Authenticator): a
// bearer token (from a Flight SQL handshake or POST /api/login) in the
// Authorization header or the arrowstream_token cookie, or basic
// credentials, which log in and set the cookie.
type webAuth struct {
	auth        *server.Authenticator // nil: no authentication
	metricsOpen bool                  // /metrics without a login
	secure      bool                  // TLS: the cookie is Secure
}

type webUserKey struct{}

// webUser is the authenticated user of a request ("" without
// authentication).
func webUser(r *http.Request) string {
	u, _ := r.Context().Value(webUserKey{}).(string)
	return u
}

// mayRead reports whether the request's user may read table (every table
// without authentication).
func (w *webAuth) mayRead(r *http.Request, table string) bool {
	return w == nil || w.auth == nil || w.auth.MayRead(webUser(r), table)
}

// queriesTable is the grant that shows the streaming queries (their names
// and SQL): the same as reading system.streaming_queries over Flight SQL.
const queriesTable = "system.streaming_queries"

func (w *webAuth) wrap(next http.Handler) http.Handler {
	if w == nil || w.auth == nil {
		return next
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/healthz":
			next.ServeHTTP(rw, r)
			return
		case r.URL.Path == "/api/login":
			w.login(rw, r)
			return
		case r.URL.Path == "/metrics" && w.metricsOpen:
			next.ServeHTTP(rw, r)
			return
		}
		user, ok := w.authenticate(rw, r)
		if !ok {
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), webUserKey{}, user))
		switch {
		case r.URL.Path == "/metrics" && !w.auth.Unrestricted(user):
			writeError(rw, http.StatusForbidden, errors.New("/metrics names every table: it needs a grant of \"*\" (or start the server with --metrics-open)"))
			return
		case strings.HasPrefix(r.URL.Path, "/api/queries") && !w.auth.MayRead(user, queriesTable):
			writeError(rw, http.StatusForbidden, errors.New("the streaming queries need a read grant on "+queriesTable))
			return
		}
		next.ServeHTTP(rw, r)
	})
}

// authenticate finds the request's user, or answers 401 and returns false.
func (w *webAuth) authenticate(rw http.ResponseWriter, r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		if u, ok := w.auth.CheckToken(strings.TrimSpace(cred)); ok {
			return u, true
		}
		w.deny(rw, "invalid or expired token: log in again")
		return "", false
	case strings.EqualFold(scheme, "Basic"):
		user, pass, ok := r.BasicAuth()
		if !ok {
			w.deny(rw, "malformed basic credentials")
			return "", false
		}
		tok, err := w.auth.Login(r.Context(), user, pass)
		if err != nil {
			w.deny(rw, "invalid user name or password")
			return "", false
		}
		w.setCookie(rw, tok)
		return user, true
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		if u, ok := w.auth.CheckToken(c.Value); ok {
			return u, true
		}
	}
	w.deny(rw, "authentication required: log in (POST /api/login, or basic auth) and send the token as a Bearer header or the "+tokenCookie+" cookie")
	return "", false
}

func (w *webAuth) deny(rw http.ResponseWriter, msg string) {
	rw.Header().Set("WWW-Authenticate", `Basic realm="arrowstream", charset="UTF-8"`)
	writeError(rw, http.StatusUnauthorized, errors.New(msg))
}

func (w *webAuth) setCookie(rw http.ResponseWriter, tok string) {
	http.SetCookie(rw, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true, Secure: w.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(cookieTTL(w.auth).Seconds())})
}

// maxLoginBody bounds the body of POST /api/login.
const maxLoginBody = 4 << 10

// login is POST /api/login: basic credentials, or a JSON or form body with
// user and password. It answers the token and sets the cookie.
func (w *webAuth) login(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		writeError(rw, http.StatusMethodNotAllowed, errors.New("log in with POST"))
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		r.Body = http.MaxBytesReader(rw, r.Body, maxLoginBody)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			var body struct {
				User     string `json:"user"`
				Password string `json:"password"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				writeError(rw, http.StatusBadRequest, errors.New("login body: want {\"user\": ..., \"password\": ...}"))
				return
			}
			user, pass = body.User, body.Password
		} else {
			if err := r.ParseForm(); err != nil {
				writeError(rw, http.StatusBadRequest, errors.New("login body: want user and password form fields"))
				return
			}
			user, pass = r.PostForm.Get("user"), r.PostForm.Get("password")
		}
	}
	tok, err := w.auth.Login(r.Context(), user, pass)
	if err != nil {
		w.deny(rw, "invalid user name or password")
		return
	}
	w.setCookie(rw, tok)
	writeJSON(rw, http.StatusOK, map[string]any{"user": user, "token": tok, "expiresInSeconds": int(cookieTTL(w.auth).Seconds())})
}
