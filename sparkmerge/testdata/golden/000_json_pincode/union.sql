SELECT `age`, `area`, `city`, `gender`, `name`, CAST(NULL AS string) AS `pincode`, `profession`
FROM json.`s3a://bucket/prefix/one.json`
UNION ALL
SELECT `age`, `area`, `city`, `gender`, `name`, `pincode`, `profession`
FROM json.`s3a://bucket/prefix/two.json`
