// Command ysbpeer runs the Yahoo Streaming Benchmark query on DuckDB over
// the events of ysb.Generate and prints one JSON line (ysb.PeerResult) per
// thread setting. `arrowstream bench` runs it as a subprocess, because
// DuckDB needs cgo and the main module has none.
//
// The events' ad_id, event_type and event_time columns are loaded through
// the appender (untimed; the query reads no other column, and DuckDB is a
// column store, so the others would not be touched); the campaigns table
// maps ad_id to campaign_id. The timed part is the whole query over all
// events at once, DuckDB's most favourable case (one batch, no epochs):
//
//	SELECT c.campaign_id, epoch_us(e.event_time) // 10000000 * 10000000, count(*)
//	FROM events e JOIN campaigns c ON e.ad_id = c.ad_id
//	WHERE e.event_type = 'view' GROUP BY ALL
//
// and the fetching of its rows. Every answer is checked against
// ysb.Data.Reference; a wrong one is reported with answer_ok false.
package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/arrowstream/arrowstream/bench/harness"
	"github.com/arrowstream/arrowstream/bench/ysb"
)

const query = `SELECT c.campaign_id, epoch_us(e.event_time) // 10000000 * 10000000 AS w, count(*) AS n
FROM events e JOIN campaigns c ON e.ad_id = c.ad_id
WHERE e.event_type = 'view' GROUP BY ALL`

func main() {
	events := flag.Int("events", 1<<20, "events to generate")
	seed := flag.Uint64("seed", 1, "generator seed")
	rate := flag.Int64("rate", ysb.EventsPerSecond, "event-time rate of the generator (events per second)")
	threads := flag.String("threads", "1", "comma-separated DuckDB thread counts to measure")
	reps := flag.Int("reps", 3, "timed runs per thread count (the median counts)")
	flag.Parse()
	if err := run(*events, *seed, *rate, *threads, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "ysbpeer:", err)
		os.Exit(1)
	}
}

func run(events int, seed uint64, rate int64, threads string, reps int) error {
	ctx := context.Background()
	d := ysb.Generate(events, rate, seed)
	want := d.Reference(0, events)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := load(ctx, conn, d); err != nil {
		return fmt.Errorf("loading: %w", err)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, ts := range strings.Split(threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(ts))
		if err != nil || n < 1 {
			return fmt.Errorf("-threads: %q is not a positive count", ts)
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET threads = %d", n)); err != nil {
			return err
		}
		res := ysb.PeerResult{Peer: fmt.Sprintf("duckdb-%dt", n), Threads: n, Events: events, AnswerOK: true}
		var walls, cpus []float64
		for range max(reps, 1) {
			sp := harness.StartSpan()
			got, err := runQuery(ctx, conn)
			wall, cpu := sp.Stop()
			if err != nil {
				return err
			}
			if diff := ysb.Diff(got, want); diff != "" {
				res.AnswerOK, res.Diff = false, diff
				break
			}
			walls, cpus = append(walls, wall.Seconds()), append(cpus, cpu.Seconds())
		}
		res.WallSec, res.CPUSec = harness.Median(walls), harness.Median(cpus)
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}

func load(ctx context.Context, conn *sql.Conn, d *ysb.Data) error {
	for _, ddl := range []string{
		"CREATE TABLE events (ad_id VARCHAR NOT NULL, event_type VARCHAR NOT NULL, event_time TIMESTAMP NOT NULL)",
		"CREATE TABLE campaigns (ad_id VARCHAR NOT NULL, campaign_id VARCHAR NOT NULL)",
	} {
		if _, err := conn.ExecContext(ctx, ddl); err != nil {
			return err
		}
	}
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("driver connection is a %T", dc)
		}
		app, err := duckdb.NewAppenderFromConn(c, "", "events")
		if err != nil {
			return err
		}
		for i := range d.Len() {
			if err := app.AppendRow(d.AdIDs[d.Ad[i]], ysb.EventTypes[d.EventType[i]], time.UnixMicro(d.Time[i]).UTC()); err != nil {
				app.Close()
				return fmt.Errorf("event %d: %w", i, err)
			}
		}
		if err := app.Close(); err != nil {
			return err
		}
		app, err = duckdb.NewAppenderFromConn(c, "", "campaigns")
		if err != nil {
			return err
		}
		for a, id := range d.AdIDs {
			if err := app.AppendRow(id, d.CampaignIDs[a/ysb.AdsPerCampaign]); err != nil {
				app.Close()
				return err
			}
		}
		return app.Close()
	})
}

func runQuery(ctx context.Context, conn *sql.Conn) (ysb.Answer, error) {
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := ysb.Answer{}
	for rows.Next() {
		var c string
		var w, n int64
		if err := rows.Scan(&c, &w, &n); err != nil {
			return nil, err
		}
		out[ysb.WindowKey{Campaign: c, Start: w}] = n
	}
	return out, rows.Err()
}
