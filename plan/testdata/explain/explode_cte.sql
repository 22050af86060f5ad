EXPLAIN EXTENDED
WITH words AS (SELECT explode(split(b, ' ')) AS w, a FROM t)
SELECT w, count(*) FROM words WHERE a > 0 GROUP BY w
