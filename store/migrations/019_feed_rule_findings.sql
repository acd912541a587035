-- Feed rule findings of each poll (issue 27, pipeline/quality/rules.ts): per rule that fired in
-- the body, how many findings and the entity of the first (NULL: the header or the body). NULL
-- when no body was checked (unchanged, failed fetch, alerts-json), and on polls stored before.
ALTER TABLE feed_polls ADD COLUMN IF NOT EXISTS findings STRUCT(rule VARCHAR, count INTEGER, example VARCHAR)[];
