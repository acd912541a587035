-- Part of rollup_select_days.sql: every route of the mode with rows in from..to ($route_id NULL).
UNION ALL
  SELECT DISTINCT route_id FROM route_days
  WHERE CAST($route_id AS VARCHAR) IS NULL
    AND service_date BETWEEN CAST($from AS DATE) AND CAST($to AS DATE)
