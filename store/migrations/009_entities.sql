-- Vehicles placed at their stop when the feed gives no coordinates (NYCT subway), and trip
-- instances for a trip id a snapshot carries more than once with different content.
ALTER TABLE vehicle_positions ADD COLUMN position_source VARCHAR DEFAULT 'gps';
-- DuckDB adds columns without constraints; NOT NULL is set once existing rows have the default
ALTER TABLE vehicle_positions ALTER COLUMN position_source SET NOT NULL;
ALTER TABLE arrivals ADD COLUMN trip_instance VARCHAR;
