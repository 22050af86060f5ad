package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
)

// webAssets is the web UI: static files only, no external network.
//
//go:embed web
var webAssets embed.FS

// httpServer serves the web UI, its JSON API and /metrics.
type httpServer struct {
	srv *http.Server
	lis net.Listener
}

// httpOptions secure the HTTP server: authentication and grants, and TLS
// when both files are set.
type httpOptions struct {
	auth              *webAuth
	certFile, keyFile string
}

// startHTTP listens on addr and serves in the background.
func startHTTP(ctx context.Context, addr string, e *engine, opts httpOptions) (*httpServer, error) {
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	h := &httpServer{
		lis: lis,
		srv: &http.Server{
			Handler:           newWebHandlerAuth(e, opts.auth),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(e.logger.Handler(), slog.LevelWarn),
		},
	}
	go func() {
		var err error
		if opts.certFile != "" {
			err = h.srv.ServeTLS(lis, opts.certFile, opts.keyFile)
		} else {
			err = h.srv.Serve(lis)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.logger.Error("HTTP server stopped", "err", err)
		}
	}()
	return h, nil
}

// Addr is the address the server listens on.
func (h *httpServer) Addr() string { return h.lis.Addr().String() }

// Stop closes the listener and waits for running requests until ctx ends.
func (h *httpServer) Stop(ctx context.Context) error {
	err := h.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return h.srv.Close()
	}
	return err
}

// newWebHandler routes the UI, the API and the metrics, without
// authentication.
func newWebHandler(e *engine) http.Handler { return newWebHandlerAuth(e, nil) }

// newWebHandlerAuth routes the UI, the API and the metrics behind wa
// (nil: open).
func newWebHandlerAuth(e *engine, wa *webAuth) http.Handler {
	mux := http.NewServeMux()
	static, err := fs.Sub(webAssets, "web")
	if err != nil {
		panic(err) // the embedded tree always has web/
	}
	files := http.FileServerFS(static)
	mux.Handle("GET /", noCache(files))
	mux.Handle("GET /metrics", e.metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	api := &webAPI{e: e, web: wa}
	mux.HandleFunc("GET /api/queries", api.queries)
	mux.HandleFunc("GET /api/queries/{id}", api.query)
	mux.HandleFunc("GET /api/queries/{id}/progress", api.progress)
	mux.HandleFunc("GET /api/queries/{id}/explain", api.explain)
	mux.HandleFunc("GET /api/tables", api.tables)
	mux.HandleFunc("GET /api/tables/{name}", api.table)
	mux.HandleFunc("GET /api/cluster/rebalances", api.rebalances)
	return wa.wrap(mux)
}

// noCache keeps browsers from holding on to an older UI after an upgrade.
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// webAPI is the JSON API of the UI.
type webAPI struct {
	e   *engine
	web *webAuth // nil: no authentication
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

var errNoQuery = errors.New("no such streaming query")

// GET /api/queries: every query with its latest figures.
func (a *webAPI) queries(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.e.monitor.Queries())
}

// queryDetail is one query and how it was defined.
type queryDetail struct {
	queryInfo
	SQL           string `json:"sql,omitempty"`
	CheckpointDir string `json:"checkpointDir,omitempty"`
}

// GET /api/queries/{id}
func (a *webAPI) query(w http.ResponseWriter, r *http.Request) {
	info, ok := a.e.monitor.Query(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, errNoQuery)
		return
	}
	d := queryDetail{queryInfo: info}
	if def, ok := a.e.definition(info.Name); ok {
		d.SQL = def.SQL
	}
	if q := a.e.session.Streams().Get(info.ID); q != nil {
		d.CheckpointDir = q.CheckpointDir()
	}
	writeJSON(w, http.StatusOK, d)
}

// GET /api/queries/{id}/progress[?last=N]: recent progress reports
// (Spark's StreamingQueryProgress JSON), oldest first.
func (a *webAPI) progress(w http.ResponseWriter, r *http.Request) {
	ps, ok := a.e.monitor.Progress(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, errNoQuery)
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("last")); err == nil && n >= 0 && n < len(ps) {
		ps = ps[len(ps)-n:]
	}
	writeJSON(w, http.StatusOK, ps)
}

// GET /api/queries/{id}/explain: EXPLAIN EXTENDED of the query.
func (a *webAPI) explain(w http.ResponseWriter, r *http.Request) {
	info, ok := a.e.monitor.Query(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, errNoQuery)
		return
	}
	plan, err := a.e.explain(r.Context(), info.Name)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"plan": plan})
}

// tableInfo is a memory-sink table as /api/tables lists it.
type tableInfo struct {
	Name        string   `json:"name"`
	Columns     []column `json:"columns"`
	Mode        string   `json:"mode"`
	Rows        int64    `json:"rows"`
	Bytes       int64    `json:"bytes"`
	Epochs      int      `json:"epochs"`
	LatestEpoch int64    `json:"latestEpoch"`
}

type column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func columnsOf(s *arrow.Schema) []column {
	cols := make([]column, s.NumFields())
	for i, f := range s.Fields() {
		cols[i] = column{f.Name, f.Type.String()}
	}
	return cols
}

// GET /api/tables: the memory-sink tables.
func (a *webAPI) tables(w http.ResponseWriter, r *http.Request) {
	out := []tableInfo{}
	for _, name := range a.e.sinks.List() {
		if !a.web.mayRead(r, name) {
			continue
		}
		t, ok := a.e.sinks.Lookup(name)
		if !ok {
			continue
		}
		sz := t.Size()
		out = append(out, tableInfo{Name: name, Columns: columnsOf(t.Schema()), Mode: t.Mode().String(),
			Rows: sz.Rows, Bytes: sz.Bytes, Epochs: sz.Epochs, LatestEpoch: t.LatestEpoch()})
	}
	writeJSON(w, http.StatusOK, out)
}

// tableRows is a sink table's current contents (a consistent snapshot of
// whole epochs), values as JSON.
type tableRows struct {
	Name    string   `json:"name"`
	Columns []column `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// GET /api/tables/{name}[?limit=N][&tail=true]: the table's rows, from a
// snapshot of whole epochs: the first N (default 100, 0 for all), or the
// last N with tail.
func (a *webAPI) table(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, errors.New("limit must be a non-negative integer"))
			return
		}
		limit = n
	}
	tail, _ := strconv.ParseBool(r.URL.Query().Get("tail"))
	name := r.PathValue("name")
	t, ok := a.e.sinks.Lookup(name)
	if !ok || !a.web.mayRead(r, name) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no streaming table %q", name))
		return
	}
	snap := t.Snapshot()
	defer snap.Release()
	out := tableRows{Name: name, Columns: columnsOf(snap.Schema()), Rows: [][]any{}}
	recs := snap.Records()
	total := int(snap.NumRows())
	from, to := 0, total
	if limit > 0 && limit < total {
		if tail {
			from = total - limit
		} else {
			to = limit
		}
	}
	base := 0
	for _, rec := range recs {
		n := int(rec.NumRows())
		for i := max(from-base, 0); i < n && base+i < to; i++ {
			row := make([]any, rec.NumCols())
			for c := range row {
				row[c] = jsonValue(rec.Column(c), i)
			}
			out.Rows = append(out.Rows, row)
		}
		base += n
		if base >= to {
			break
		}
	}
	writeJSON(w, http.StatusOK, out)
}
