package main

import (
	"context"
	"encoding/json"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}

func TestWebAPI(t *testing.T) {
	e := startDemo(t, 2)
	srv := httptest.NewServer(newWebHandler(e))
	defer srv.Close()

	var qs []queryInfo
	getJSON(t, srv.URL+"/api/queries", &qs)
	if len(qs) != 2 || qs[0].Name != "page_views" || qs[1].Name != "top_pages" {
		t.Fatalf("queries: %+v", qs)
	}
	pv := qs[0]
	if pv.Status != "active" || pv.Watermark == "" || pv.StateRows == 0 || pv.SinkRows == 0 {
		t.Fatalf("page_views: %+v", pv)
	}
	var detail queryDetail
	getJSON(t, srv.URL+"/api/queries/"+pv.ID, &detail)
	if !strings.Contains(detail.SQL, "CREATE STREAMING TABLE page_views") || detail.CheckpointDir == "" {
		t.Fatalf("detail: %+v", detail)
	}
	var progress []arrowstream.StreamingQueryProgress
	getJSON(t, srv.URL+"/api/queries/"+pv.ID+"/progress", &progress)
	if len(progress) < 2 || progress[len(progress)-1].Name == nil || *progress[len(progress)-1].Name != "page_views" {
		t.Fatalf("progress: %d reports", len(progress))
	}
	getJSON(t, srv.URL+"/api/queries/"+pv.ID+"/progress?last=1", &progress)
	if len(progress) != 1 {
		t.Fatalf("progress?last=1: %d reports", len(progress))
	}
	var explain map[string]string
	getJSON(t, srv.URL+"/api/queries/"+pv.ID+"/explain", &explain)
	if !strings.Contains(explain["plan"], "EventTimeWatermark") || !strings.Contains(explain["plan"], "StreamingScan clicks") {
		t.Fatalf("explain: %s", explain["plan"])
	}
	// Outside cluster mode: no cluster, no rebalances.
	var rbs clusterRebalances
	getJSON(t, srv.URL+"/api/cluster/rebalances", &rbs)
	if rbs.Cluster != "" || rbs.Rebalances == nil || len(rbs.Rebalances) != 0 {
		t.Fatalf("rebalances outside cluster mode: %+v", rbs)
	}
	var tables []tableInfo
	getJSON(t, srv.URL+"/api/tables", &tables)
	if len(tables) != 2 {
		t.Fatalf("tables: %+v", tables)
	}
	var top tableRows
	getJSON(t, srv.URL+"/api/tables/top_pages?limit=3&tail=true", &top)
	if len(top.Rows) != 3 || len(top.Columns) != 3 || top.Columns[0].Name != "page" {
		t.Fatalf("top_pages: %+v", top)
	}
	var all tableRows
	getJSON(t, srv.URL+"/api/tables/top_pages?limit=0", &all)
	if len(all.Rows) != 10 || all.Rows[0][0] != "/" {
		t.Fatalf("top_pages, all rows: %+v", all.Rows)
	}
	var errBody map[string]string
	if code := getJSON(t, srv.URL+"/api/queries/nope/progress", &errBody); code != http.StatusNotFound || errBody["error"] == "" {
		t.Fatalf("unknown query: %d %v", code, errBody)
	}
	if code := getJSON(t, srv.URL+"/api/tables/top_pages?limit=-1", &errBody); code != http.StatusBadRequest {
		t.Fatalf("bad limit: %d", code)
	}
	for _, asset := range []string{"/", "/app.js", "/charts.js", "/style.css"} {
		resp, err := http.Get(srv.URL + asset)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %v %v", asset, resp.Status, err)
		}
		resp.Body.Close()
	}
}

// chromium finds a Chromium binary ($ARROWSTREAM_CHROMIUM, else the PATH).
func chromium() string {
	if p := os.Getenv("ARROWSTREAM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// runChromium runs headless Chromium on url with extra flags and returns
// its standard output.
func runChromium(t *testing.T, bin, url string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(5*time.Minute))
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(),
		// Virtual time: run the page's timers (its once-a-second polling)
		// for 10 s; time stops while its requests are pending.
		"--virtual-time-budget=10000"}
	cmd := exec.CommandContext(ctx, bin, append(append(args, extra...), url)...)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
	}
	return string(out)
}

// TestWebUIInChromium loads the UI of a running demo in headless Chromium:
// the page loads, lists the queries and draws its charts with data
// (data-points on each canvas, data-ready on the body once the main
// charts have points), and a screenshot is saved.
func TestWebUIInChromium(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no chromium binary: install Debian's chromium (.ci/run does) or set ARROWSTREAM_CHROMIUM")
	}
	e := startDemo(t, 3)
	h, err := startHTTP(context.Background(), "127.0.0.1:0", e, httpOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop(context.Background())
	url := "http://" + h.Addr() + "/"

	dom := runChromium(t, bin, url, "--dump-dom")
	if !regexp.MustCompile(`<body[^>]*data-ready="true"`).MatchString(dom) {
		t.Fatalf("the charts did not get data (no data-ready=\"true\" on body):\n%s", dom)
	}
	for _, want := range []string{">page_views<", ">top_pages<", "Input Rate", "Global Watermark Gap", "EventTimeWatermark", `"batchId"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The demo's queries are micro-batch: no continuous-latency chart.
	if !regexp.MustCompile(`data-chart="latency"[^>]*hidden`).MatchString(dom) {
		t.Errorf("the continuous-latency chart is shown for a micro-batch query")
	}
	drawn := 0
	for _, m := range regexp.MustCompile(`<canvas[^>]*data-points="(\d+)"`).FindAllStringSubmatch(dom, -1) {
		if n, _ := strconv.Atoi(m[1]); n >= 2 {
			drawn++
		}
	}
	if drawn < 8 {
		t.Errorf("%d charts have data, want at least 8 of 10", drawn)
	}

	shot := os.Getenv("ARROWSTREAM_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(os.TempDir(), "arrowstream-webui.png")
	}
	runChromium(t, bin, url, "--screenshot="+shot, "--window-size=1400,1900", "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// A page with drawn charts has many colours; an empty one a handful.
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>11<<10|g>>11<<5|bl>>11] = true
		}
	}
	if b.Dx() != 1400 || len(colours) < 50 {
		t.Errorf("screenshot %s: %dx%d, %d colours", shot, b.Dx(), b.Dy(), len(colours))
	}
	t.Logf("screenshot of the web UI: %s", shot)
}
