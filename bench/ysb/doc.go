// Package ysb is the Yahoo Streaming Benchmark for Arrowstream: a generator
// of ad events (as Arrow records with plain or dictionary-encoded strings,
// and as JSON lines), the static campaigns table, the query in Arrowstream's
// SQL run through the real engine (Session, streaming query, memory sink),
// and the peers it is compared with in the same run: a hand-written Go
// implementation over the same records and a bare Arrow Flight server.
//
// The query (the benchmark's definition): keep events whose event_type is
// 'view', project ad_id and event_time, join ad_id to campaign_id through
// the static table of 100 campaigns × 10 ads, and count views per campaign
// in 10-second tumbling windows of event time, with a watermark. Every
// answer is checked against Data.Reference, computed from the generator's
// indices without strings or Arrow.
package ysb
