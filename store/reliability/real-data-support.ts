// Real agencies' captures (../shared/fixtures-real) through the real import, decoder,
// normalizer and history writer, for the reliability tests that read them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../core/config.ts';
import type { ScheduleIndex } from '../../core/ports.ts';
import { decodeFeedMessage } from '../../pipeline/decode.ts';
import { RejectTally } from '../../pipeline/normalize-context.ts';
import { normalizeFeedMessage } from '../../pipeline/normalize-feed.ts';
import type { Db } from '../db.ts';
import { createHistoryWriter } from '../history-writer.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(repoRoot, '..', 'shared', 'fixtures-real');
export const MISSING_FIXTURES = existsSync(FIXTURES)
  ? null
  : `real feed captures not found at ${FIXTURES} (CI places ../shared/fixtures-real beside the checkout)`;
const config = parseConfig({});

/** Decodes one capture and stores its trip observations as the pipeline would, at the header time. */
export async function ingest(db: Db, file: string, feedId: string, schedule: ScheduleIndex | undefined, timezone: string): Promise<number> {
  const decoded = decodeFeedMessage(readFileSync(join(FIXTURES, file)));
  if (!decoded.ok) throw new Error(`${file}: ${decoded.error}`);
  const observedMs = Number(decoded.message.header?.timestamp ?? 0) * 1000;
  const poll = normalizeFeedMessage(decoded.message, {
    feed_id: feedId, observed_ms: observedMs, schedule, timezone,
    freshness: config.freshness, delay: config.delay, rejects: new RejectTally(),
  });
  await createHistoryWriter(db).write({ vehicles: [], arrivals: [], trips: poll.trips, alertVersions: [], polls: [] });
  return poll.trips.length;
}
