-- The built-in demo of `arrowstream run`: synthetic click events, counted
-- per page in 10-second event-time windows, and the all-time top pages.
-- Run it yourself with `arrowstream run demo.sql`, or change it.

-- A stream of click events (id, event_time, user_id, page, country). The
-- clicks format generates them like Spark's rate source, at rowsPerSecond;
-- an event's time lies up to maxLateness before its arrival, so events
-- arrive out of order and a few arrive after the watermark.
CREATE TABLE clicks USING clicks
  OPTIONS (rowsPerSecond '200', maxLateness '8 seconds', lateFraction '0.05');

-- Views per page and 10-second tumbling window. The watermark trails the
-- latest event time by 5 seconds: a window is written once, when the
-- watermark passes its end, and events older than the watermark are
-- dropped (the numRowsDroppedByWatermark of the progress reports). The
-- sink keeps its epochs in the checkpoint, so that a restarted run serves
-- the same windows and goes on with the next ones.
CREATE STREAMING TABLE page_views
  TBLPROPERTIES ('outputMode' = 'append', 'trigger' = '1 second', 'persist' = 'true')
AS SELECT window.start AS window_start, window.end AS window_end, page, count(*) AS views
   FROM STREAM clicks WATERMARK event_time DELAY OF INTERVAL 5 SECONDS
   GROUP BY window(event_time, '10 seconds'), page;

-- The ten most viewed pages since the start, with their distinct users,
-- rewritten whole every epoch (Complete mode). users is an estimate:
-- approx_count_distinct (HyperLogLog++, Spark's default relative error of
-- 5%) keeps a sketch of fixed size per page where count(DISTINCT
-- user_id) would keep every user ever seen, so a page whose views are
-- nearly all from different users may show a few more users than views.
CREATE STREAMING TABLE top_pages
  TBLPROPERTIES ('outputMode' = 'complete', 'trigger' = '1 second')
AS SELECT page, count(*) AS views, approx_count_distinct(user_id) AS users
   FROM STREAM clicks
   GROUP BY page
   ORDER BY views DESC
   LIMIT 10;
