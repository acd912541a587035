// Real agencies' captures (../shared/fixtures-real) through the real import, decoder,
// normalizer and history writer, for the reliability tests that read them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../core/config.ts';
import type { ScheduleIndex } from '../../core/ports.ts';
import { decodeFeedMessage } from '../../pipeline/decode.ts';
import { RejectTally } from '../../pipeline/normalize-context.ts';
import { normalizeFeedMessage } from '../../pipeline/normalize-feed.ts';
import type { Db } from '../../store/db.ts';
import { createHistoryWriter } from '../../store/history-writer.ts';
import { FIXTURES_REAL, hasRealFixtures } from './pipeline-fakes.ts';

export const FIXTURES = FIXTURES_REAL;
export const MISSING_FIXTURES = hasRealFixtures()
  ? null
  : `real feed captures not found at ${FIXTURES} (CI places ../shared/fixtures-real beside the checkout)`;
const config = parseConfig({});

/** Decodes one capture and stores its trip observations as the pipeline would, at the header time. */
export async function ingest(
  db: Db,
  file: string,
  feedId: string,
  schedule: ScheduleIndex | undefined,
  timezone: string,
): Promise<number> {
  const decoded = decodeFeedMessage(readFileSync(join(FIXTURES, file)));
  if (!decoded.ok) throw new Error(`${file}: ${decoded.error}`);
  const observedMs = Number(decoded.message.header?.timestamp ?? 0) * 1000;
  const poll = normalizeFeedMessage(decoded.message, {
    feed_id: feedId,
    observed_ms: observedMs,
    schedule,
    timezone,
    freshness: config.freshness,
    delay: config.delay,
    rejects: new RejectTally(),
  });
  await createHistoryWriter(db).write({ vehicles: [], arrivals: [], trips: poll.trips, alertVersions: [], polls: [] });
  return poll.trips.length;
}
