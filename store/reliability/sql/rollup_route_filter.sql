-- Part of rollup.sql: one route asked. A variant rather than `$route_id IS NULL OR …`: the
-- prepared plan then filters the scan itself instead of every row after it.
AND route_id = $route_id
