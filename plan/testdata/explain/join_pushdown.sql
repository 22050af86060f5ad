EXPLAIN EXTENDED
SELECT t.b, u.d
FROM t JOIN u ON t.a = u.a AND u.d <> 'x'
WHERE t.c > 0 AND t.b = u.d
