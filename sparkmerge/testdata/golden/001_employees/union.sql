SELECT CAST(`emp_id` AS bigint) AS `emp_id`, `name`, `dept`, CAST(`salary` AS double) AS `salary`, CAST(NULL AS date) AS `joining_date`, CAST(NULL AS string) AS `email`, 'emp_data1.csv' AS `_source`
FROM emp_data1
UNION ALL
SELECT CAST(`emp_id` AS bigint) AS `emp_id`, `name`, `dept`, `salary`, `joining_date`, CAST(NULL AS string) AS `email`, 'emp_data2.csv' AS `_source`
FROM emp_data2
UNION ALL
SELECT `emp_id`, `name`, `Dept` AS `dept`, CAST(`salary` AS double) AS `salary`, CAST(NULL AS date) AS `joining_date`, `email`, 'emp_data3.csv' AS `_source`
FROM emp_data3
