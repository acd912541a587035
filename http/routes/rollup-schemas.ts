// What the reliability and performance rollups' responses share: the row's place in the range
// and the meta about the range, with the words that differ given by each rollup.
import { z } from 'zod';
import 'zod-openapi';
import { ROLLUP_GROUPS } from '../../store/rollup-input.ts';
import { ModeSchema } from './schemas.ts';

export const date = (description: string) => z.string().meta({ description, format: 'date', example: '2024-04-30' });
export const count = (description: string) => z.number().int().min(0).meta({ description });

export const RetainedWindowSchema = z
  .object({
    from: date('First service date with retained rows for the mode.'),
    to: date(
      'Last service date that can be asked for: the last day with rows, or today in the agency time zone when later.',
    ),
    finalized_through: z
      .string()
      .nullable()
      .meta({ format: 'date', description: 'Last finalized service date; null before the first.' }),
  })
  .meta({ id: 'RetainedWindow' });

export type ApiRetainedWindow = z.input<typeof RetainedWindowSchema>;

/** The first members of a rollup row: which route, group and days it counts. */
export function rollupRowFields(words: { final: string; days_observed: string }) {
  return {
    id: z.string().meta({
      description: 'Stable id of the row within the resource: route, period and, with split, the service day type.',
      example: '39:2024-04-30',
    }),
    route_id: z.string().meta({ description: 'Bus or streetcar route id, or rail line id.', example: '39' }),
    period: z.string().meta({
      description: 'The group: `YYYY-MM-DD` (day), ISO week `YYYY-Www` (week), or `from/to` (period).',
      example: '2024-W18',
    }),
    period_start: date('First day of the group inside from..to (a week cut by the range is shorter).'),
    period_end: date('Last day of the group inside from..to.'),
    service_day: z.enum(['all', 'weekday', 'saturday', 'sunday']).meta({
      description:
        '`all`, or with split=service_day the type of the service dates counted (by the calendar day of ' +
        'the service date).',
    }),
    days: count('Service dates counted in the row.'),
    final: z.boolean().meta({ description: words.final }),
    days_observed: count(words.days_observed),
  };
}

/** A rollup's meta: the range asked, the time zone and the retained window, then its own members. */
export function rollupMeta<Extra extends z.ZodRawShape>(
  words: { days_without_observations: string; notes: string },
  extra: Extra,
) {
  return z.object({
    mode: ModeSchema,
    route_id: z.string(),
    group: z.enum(ROLLUP_GROUPS),
    from: date('First service date of the range.'),
    to: date('Last service date of the range.'),
    split: z.enum(['none', 'service_day']),
    timezone: z
      .string()
      .meta({ description: 'Agency time zone the service dates are counted in.', example: 'America/Chicago' }),
    complete_through: date('Last service date that is over; later days are still running.'),
    retained_window: RetainedWindowSchema,
    ...extra,
    days_without_observations: z.array(z.string().meta({ format: 'date' })).meta({
      description: words.days_without_observations,
      example: ['2024-04-28'],
    }),
    notes: z.array(z.string()).meta({ description: words.notes }),
  });
}
