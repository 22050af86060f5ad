package nexmark

// streamQueries are the queries that need Arrowstream's streaming
// extensions beyond Spark (distinct aggregates and top-N per partition on
// streams, docs/semantics.md §5.1 and §5.5) or string functions: q9, q15,
// q16, q18, q19, q21, q22. They follow the reference SQL (Nexmark's
// Flink queries) with the deviations README.md lists.
var streamQueries = []query{
	{name: "q9", title: "winning bids (stream-stream join, top-1 per auction)",
		sql: `SELECT id, itemName, initialBid, reserve, dateTime, expires, seller, category,
       auction, bidder, price, bid_dateTime
FROM (SELECT A.id, A.itemName, A.initialBid, A.reserve, A.dateTime, A.expires, A.seller, A.category,
             B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime,
             row_number() OVER (PARTITION BY A.id, A.expires ORDER BY B.price DESC, B.dateTime, B.bidder) AS rownum
      FROM STREAM auction WATERMARK expires DELAY OF INTERVAL 1 SECOND AS A
      JOIN STREAM bid ` + wm + ` AS B
        ON A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires)
WHERE rownum <= 1`,
		newPeer: func() peer { return newQ9Peer() }},
	{name: "q15", title: "bidding statistics per day (distinct counts, Update mode)",
		sql: `SELECT date_format(dateTime, 'yyyy-MM-dd') AS day,
       count(*) AS total_bids,
       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
       count(DISTINCT bidder) AS total_bidders,
       count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
       count(DISTINCT auction) AS total_auctions,
       count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM STREAM bid
GROUP BY date_format(dateTime, 'yyyy-MM-dd')`,
		update:  true,
		newPeer: func() peer { return newQ15Peer() }},
	{name: "q16", title: "channel statistics per day (distinct counts, Update mode)",
		sql: `SELECT channel, date_format(dateTime, 'yyyy-MM-dd') AS day,
       max(date_format(dateTime, 'HH:mm')) AS minute,
       count(*) AS total_bids,
       count(*) FILTER (WHERE price < 10000) AS rank1_bids,
       count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
       count(*) FILTER (WHERE price >= 1000000) AS rank3_bids,
       count(DISTINCT bidder) AS total_bidders,
       count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
       count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
       count(DISTINCT auction) AS total_auctions,
       count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
       count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions
FROM STREAM bid
GROUP BY channel, date_format(dateTime, 'yyyy-MM-dd')`,
		update:  true,
		newPeer: func() peer { return newQ16Peer() }},
	{name: "q18", title: "last bid per bidder and auction (top-1, Update mode)",
		sql: `SELECT auction, bidder, price, channel, url, dateTime, extra
FROM STREAM bid
QUALIFY row_number() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) = 1`,
		update:  true,
		newPeer: func() peer { return newQ18Peer() }},
	{name: "q19", title: "top 10 bids per auction (top-N, Update mode)",
		sql: `SELECT * FROM (
  SELECT auction, bidder, price, channel, url, dateTime, extra,
         row_number() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number
  FROM STREAM bid)
WHERE rank_number <= 10`,
		update:  true,
		newPeer: func() peer { return newQ19Peer() }},
	{name: "q21", title: "add channel id (CASE, regexp_extract)",
		sql: `SELECT auction, bidder, price, channel,
       CASE WHEN lower(channel) = 'apple' THEN '0'
            WHEN lower(channel) = 'google' THEN '1'
            WHEN lower(channel) = 'facebook' THEN '2'
            WHEN lower(channel) = 'baidu' THEN '3'
            ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
FROM STREAM bid
WHERE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) <> ''
   OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`,
		newPeer: func() peer { return &q21Peer{} }},
	{name: "q22", title: "url directories (split_part)",
		sql: `SELECT auction, bidder, price, channel,
       split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3
FROM STREAM bid`,
		newPeer: func() peer { return &q22Peer{} }},
}
