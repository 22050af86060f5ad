EXPLAIN EXTENDED
SELECT window.start AS minute, url, count(*) AS clicks
FROM STREAM clicks WATERMARK ts DELAY OF INTERVAL 30 SECONDS
WHERE url <> ''
GROUP BY window(ts, '1 minute'), url
