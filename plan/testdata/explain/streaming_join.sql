EXPLAIN
SELECT c.url, u.d FROM STREAM clicks c JOIN u ON c.user_id = u.a WHERE c.url LIKE 'http%' AND u.d <> 'bot'
