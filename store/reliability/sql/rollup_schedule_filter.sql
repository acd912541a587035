-- Part of rollup.sql: the rows of the schedules a served route id stands for (core/served-ids.ts
-- resolve: `a:1` is route 1 of schedule a); '' stands for rows without a schedule. Left out when
-- ids are not scoped (one schedule), so that query stays as it was.
AND list_contains(CAST($schedules AS VARCHAR[]), coalesce(schedule_id, ''))
