// Response shape of the reliability rollups. Each named schema becomes an OpenAPI component.
import { z } from 'zod';
import 'zod-openapi';
import { count, date, rollupMeta, rollupRowFields } from './rollup-schemas.ts';
const pct = (description: string) => z.number().min(0).nullable().meta({ description, example: 98.57 });

export const RollingWindowSchema = z
  .object({
    from: date('First day of the seven.'),
    to: date("The row's day."),
    scheduled: count('Denominator: trips scheduled over the seven days.'),
    delivered: count('Numerator: scheduled trips seen running over the seven days.'),
    delivered_pct: pct('delivered / scheduled × 100, two decimals; null when nothing was scheduled.'),
    unobserved: count('Scheduled trips of the seven days never seen, on days that are over.'),
    observed: count('Scheduled trips of the seven days seen by any feed (running or canceled).'),
    delivered_pct_of_observed: pct(
      'delivered / observed × 100, two decimals: the share of the trips seen that ran; null when no ' +
        'scheduled trip was seen.',
    ),
  })
  .meta({
    id: 'ReliabilityRolling7d',
    description: "The seven service days ending on the row's day (group=day only).",
  });

export const ReliabilityRowSchema = z
  .object({
    ...rollupRowFields({
      final:
        'Every day of the row is finalized. false while a day is running or not finalized yet: its figures ' +
        'may still change.',
      days_observed:
        'Days of the row on which any trip was seen by any feed. Fewer than `days`: the other days have no ' +
        'observations (before history began, a feed outage, archives not replayed), and their scheduled trips ' +
        'count as unobserved.',
    }),
    scheduled: count('Denominator: trips in the static schedule for these service dates.'),
    delivered: count(
      'Numerator: scheduled trips seen running (trip updates or vehicle positions), partially canceled ones included.',
    ),
    canceled: count('Trips seen CANCELED or DELETED at any poll of the day and not restored later, scheduled or not.'),
    canceled_unscheduled: count(
      'The part of `canceled` the schedule does not list (no static schedule, or unknown trip ids).',
    ),
    partially_canceled: count('Trips seen running with at least one SKIPPED stop.'),
    unobserved: count('Scheduled trips never seen, on days that are over.'),
    pending: count('Scheduled trips not seen yet on a day still running.'),
    added: count('Trips seen running that the schedule does not list (ADDED, DUPLICATED copies, unknown trip ids).'),
    delivered_pct: pct(
      'delivered / scheduled × 100, two decimals; null when nothing was scheduled (never a division by zero).',
    ),
    observed: count(
      'Scheduled trips seen by any feed, running or canceled: scheduled - unobserved - pending, the denominator of ' +
        '`delivered_pct_of_observed`.',
    ),
    delivered_pct_of_observed: pct(
      'delivered / observed × 100, two decimals: the share of the trips seen that ran; null when no scheduled trip ' +
        'was seen. Beside `delivered_pct`, it tells missing data (few trips observed) from missing service; ' +
        '`meta.notes` names the rows where more than half the scheduled trips were never observed.',
    ),
    rolling_7d: RollingWindowSchema.nullable().meta({
      description: 'group=day: the seven days ending on this day; null for week and period.',
    }),
  })
  .meta({
    id: 'ReliabilityRow',
    description:
      'For scheduled trips: scheduled = delivered + (canceled - canceled_unscheduled) + unobserved + pending, and ' +
      'observed = scheduled - unobserved - pending.',
  });

export const ReliabilityRollupSchema = z
  .object({
    data: z.array(ReliabilityRowSchema).meta({
      description:
        'One row per group (and service day type with split), in date order; days without trips are rows of zeros.',
    }),
    meta: rollupMeta(
      {
        days_without_observations:
          'Service dates of from..to, up to today, on which no trip was seen by any feed: their figures measure ' +
          'missing data, not service.',
        notes:
          'Caveats about the figures in words; empty when there are none: days without observations, and rows (or ' +
          'their 7-day figures) where more than half the scheduled trips were never observed, so `delivered_pct` ' +
          'measures missing data more than missing service (compare `delivered_pct_of_observed`).',
      },
      {},
    ),
  })
  .meta({ id: 'ReliabilityRollup' });

export type ApiReliabilityRollup = z.input<typeof ReliabilityRollupSchema>;
