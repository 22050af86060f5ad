EXPLAIN
CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete') AS
SELECT value, count(*) AS count FROM STREAM input GROUP BY value
