// The poll log (feed_polls) as the status page and the admin status command count it.
import { SUCCESSFUL_POLL_STATUSES } from '../core/types.ts';

/** SQL condition on feed_polls.status: a poll that failed (neither data nor a confirmation of it). */
export const FAILED_POLL_SQL = `status NOT IN (${SUCCESSFUL_POLL_STATUSES.map((s) => `'${s}'`).join(', ')})`;
