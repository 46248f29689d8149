SELECT `name`, `age`, `hight`, `weight`
FROM newdf
UNION ALL
SELECT `name`, `age`, `hight`, CAST(NULL AS double) AS `weight`
FROM olddf
