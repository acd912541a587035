import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `../shared/fixtures-real` from the repository root; TRANSIT_FIXTURES_REAL points elsewhere (a git worktree) */
export const FIXTURES_REAL =
  process.env.TRANSIT_FIXTURES_REAL ??
  join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'fixtures-real');
export const hasRealFixtures = (): boolean => existsSync(join(FIXTURES_REAL, 'README.md'));
/** The reason a test over real captures is skipped, or false when they are there. */
export const noRealFixtures = (): string | false =>
  hasRealFixtures() ? false : `real fixtures absent: ${FIXTURES_REAL}`;
