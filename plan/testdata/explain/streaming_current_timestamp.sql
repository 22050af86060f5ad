EXPLAIN
SELECT value, count(*) FROM STREAM input GROUP BY value HAVING value >= CAST(current_timestamp() AS BIGINT) - 10 AND value > 0
