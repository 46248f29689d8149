SELECT `Date`, `Region`, `Location`, `Tide`, `TimeUTC`, `Height`, CAST(NULL AS string) AS `ReadingId`, CAST(NULL AS int) AS `TideNumber`
FROM tides_1
UNION ALL
SELECT `Date`, CAST(NULL AS string) AS `Region`, `Location`, `Tide`, `TimeUTC`, `Height`, `ReadingId`, `TideNumber`
FROM tides_2
