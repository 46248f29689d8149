SELECT `id`, `name`
FROM df1
UNION ALL
SELECT `id`, `name`
FROM df2
