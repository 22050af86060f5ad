package nexmark

// query is one Nexmark query: its streaming SQL (run as CREATE STREAMING
// TABLE <name> ... AS <SQL>), an optional batch SQL over the sink table
// whose result is the answer instead of the table itself, and its Go peer.
type query struct {
	name, title string
	sql         string
	// post, when set, is a batch query over the sink table (named by the
	// query's name) computing the answer from it.
	post    string
	newPeer func() peer
	// sideInput says the query reads the static table side_input.
	sideInput bool
	// update runs the query in Update mode into a memory-sink view (the
	// latest row per key) instead of Append mode.
	update bool
	// conf holds session settings for the engine's run (Spark's keys),
	// e.g. spark.sql.shuffle.partitions from BenchmarkEngineEpochs'
	// -nexmark.partitions.
	conf map[string]string
}

// The watermark clause every event-time query puts on its streams: the
// generator's events are in order, so the watermark trails the largest
// event time by nothing.
const wm = "WATERMARK dateTime DELAY OF INTERVAL 0 SECONDS"

// queries lists the queries that run here, in Nexmark's order. README.md
// says for each how it follows the reference SQL and where it deviates.
var queries = append([]query{
	{name: "q0", title: "pass through",
		sql:     `SELECT auction, bidder, price, dateTime, extra FROM STREAM bid`,
		newPeer: func() peer { return &q0Peer{} }},
	{name: "q1", title: "currency conversion",
		sql:     `SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM STREAM bid`,
		newPeer: func() peer { return &q1Peer{} }},
	{name: "q2", title: "selection",
		sql:     `SELECT auction, price FROM STREAM bid WHERE auction % 123 = 0`,
		newPeer: func() peer { return &q2Peer{} }},
	{name: "q3", title: "local item suggestion (stream-stream join)",
		sql: `SELECT P.name, P.city, P.state, A.id
FROM STREAM auction AS A INNER JOIN STREAM person AS P ON A.seller = P.id
WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')`,
		newPeer: func() peer { return newQ3Peer() }},
	{name: "q4", title: "average closing price per category (join, two aggregations)",
		sql: `SELECT A.id, A.category, A.expires, max(B.price) AS final
FROM STREAM auction WATERMARK expires DELAY OF INTERVAL 1 SECOND AS A
JOIN STREAM bid ` + wm + ` AS B
  ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
GROUP BY A.id, A.category, A.expires`,
		post:    `SELECT category, avg(final) AS avg_final FROM q4 GROUP BY category`,
		newPeer: func() peer { return newQ4Peer() }},
	{name: "q5", title: "hot items (sliding-window counts, max per window, join)",
		sql: `WITH counts AS (
  SELECT auction, count(*) AS num, window
  FROM STREAM bid ` + wm + `
  GROUP BY auction, window(dateTime, '10 seconds', '2 seconds'))
SELECT c.auction, c.num
FROM counts c JOIN (SELECT window AS w, max(num) AS maxn FROM counts GROUP BY window) m
  ON c.window = m.w AND c.num >= m.maxn`,
		newPeer: func() peer { return newQ5Peer() }},
	q6Query,
	{name: "q7", title: "highest bid (window max joined back to the bids)",
		sql: `SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
FROM STREAM bid ` + wm + ` AS B
JOIN (SELECT max(price) AS maxprice, window.end - INTERVAL 1 MILLISECOND AS rowtime
      FROM STREAM bid ` + wm + `
      GROUP BY window(dateTime, '10 seconds')) M
  ON B.price = M.maxprice AND B.dateTime BETWEEN M.rowtime - INTERVAL 10 SECONDS AND M.rowtime`,
		newPeer: func() peer { return newQ7Peer() }},
	{name: "q8", title: "monitor new users (two windowed aggregations, join)",
		sql: `SELECT P.id, P.name, P.window.start AS starttime
FROM (SELECT id, name, window FROM STREAM person ` + wm + `
      GROUP BY id, name, window(dateTime, '10 seconds')) P
JOIN (SELECT seller, window FROM STREAM auction ` + wm + `
      GROUP BY seller, window(dateTime, '10 seconds')) A
  ON P.id = A.seller AND P.window = A.window`,
		newPeer: func() peer { return newQ8Peer() }},
	{name: "q11", title: "user sessions (session windows)",
		sql: `SELECT bidder, count(*) AS bid_count, session_window.start AS starttime, session_window.end AS endtime
FROM STREAM bid ` + wm + `
GROUP BY bidder, session_window(dateTime, '10 seconds')`,
		newPeer: func() peer { return newQ11Peer() }},
	{name: "q13", title: "bounded side input join (stream-static)",
		sql: `SELECT B.auction, B.bidder, B.price, B.dateTime, S.value
FROM STREAM bid B JOIN side_input S ON B.auction % 10000 = S.key`,
		sideInput: true,
		newPeer:   func() peer { return &q13Peer{} }},
	{name: "q17", title: "auction statistics per day (running aggregation, Update mode)",
		sql: `SELECT auction, date_trunc('DAY', dateTime) AS day, count(*) AS total_bids,
       sum(CASE WHEN price < 10000 THEN 1 ELSE 0 END) AS rank1_bids,
       sum(CASE WHEN price >= 10000 AND price < 1000000 THEN 1 ELSE 0 END) AS rank2_bids,
       sum(CASE WHEN price >= 1000000 THEN 1 ELSE 0 END) AS rank3_bids,
       min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
FROM STREAM bid
GROUP BY auction, date_trunc('DAY', dateTime)`,
		update:  true,
		newPeer: func() peer { return newQ17Peer() }},
	{name: "q20", title: "expand bid with auction (stream-stream join)",
		sql: `SELECT auction, bidder, price, channel, url, B.dateTime, B.extra,
       itemName, description, initialBid, reserve, A.dateTime, expires, seller, category, A.extra
FROM STREAM bid AS B INNER JOIN STREAM auction AS A ON B.auction = A.id
WHERE A.category = 10`,
		newPeer: func() peer { return newQ20Peer() }},
}, streamQueries...)
