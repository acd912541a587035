-- Change-only history (issue 24): trip_observations keeps the first and the last poll of each run
-- of unchanged observations of a trip instead of a row per poll, so a row stands for one or more
-- polls. Rows stored before this migration were one poll each: they get 1, and keep their meaning.
ALTER TABLE trip_observations ADD COLUMN polls INTEGER DEFAULT 1;
-- DuckDB adds columns without constraints; NOT NULL is set once existing rows have the default
ALTER TABLE trip_observations ALTER COLUMN polls SET NOT NULL;
