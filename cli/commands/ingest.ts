import { loadConfig } from '../../core/config.ts';
import { isSuccessfulPoll, type FeedPoll, type StopEventCounts, type TripMatching } from '../../core/types.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../../core/usage-error.ts';
import { print } from '../output.ts';

/** What a status means for the operator, where the word alone does not say it. */
const STATUS_NOTES: Partial<Record<FeedPoll['status'], string>> = {
  duplicate:
    'this snapshot is stored already (an earlier run or process): live state updated, history not appended again',
  rejected: 'not ok: nothing from this snapshot was stored',
};

const percent = (rate: number): string => `${(rate * 100).toFixed(1)} %`;

/** "trips matched: 241 of 257 (93.8 %); exact 0/257, nyct 241/257 (4 ambiguous)…", or null without trips. */
export function describeMatching(matching: TripMatching | null, hasSchedule: boolean): string | null {
  if (!matching) return null;
  const head = `trips matched to the schedule: ${matching.matched} of ${matching.trips} (${percent(matching.match_rate)})`;
  if (!hasSchedule) return `${head}: no schedule for this feed (set feeds[].schedule_id, or configure one schedule)`;
  const steps = Object.entries(matching.strategies).map(([strategy, c]) => {
    const decided = c.matched + c.unmatched + c.ambiguous;
    return `${strategy} ${c.matched}/${decided}${c.ambiguous ? ` (${c.ambiguous} ambiguous)` : ''}`;
  });
  const extra = [
    matching.ambiguous ? `${matching.ambiguous} ambiguous` : '',
    matching.previous_day ? `${matching.previous_day} on the service day before their start_date` : '',
  ].filter(Boolean);
  return `${head}${steps.length ? `; ${steps.join(', ')}` : ''}${extra.length ? `; ${extra.join(', ')}` : ''}`;
}

/** "stop events: 3 written; anomalies: vehicle_backwards 1" */
export function describeStopEvents(counts: StopEventCounts): string {
  const anomalies = Object.entries(counts.anomalies)
    .filter(([, n]) => n)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  return `stop events: ${counts.written} written (stops passed in this snapshot); anomalies: ${anomalies || 'none'}`;
}

/** "feed rules: E022 ×3 (e.g. entity 1234), W009 ×19", or null when the body was not checked. */
export function describeFindings(findings: FeedPoll['findings']): string | null {
  if (!findings) return null;
  const rules = Object.entries(findings);
  if (rules.length === 0) return 'feed rules: no findings';
  const list = rules
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([rule, t]) => `${rule} ×${t.count}${t.example === null ? '' : ` (e.g. entity ${t.example})`}`);
  return `feed rules: ${list.join(', ')} (transit-api validate prints each one; docs/guides/feed-quality.md)`;
}

function describe(poll: FeedPoll, hasSchedule: boolean): string {
  const rejected = Object.entries(poll.rejected)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  const note = STATUS_NOTES[poll.status];
  const head = `${poll.feed_id}: ${poll.status}${poll.http_status ? ` (HTTP ${poll.http_status})` : ''}${note ? ` (${note})` : ''}`;
  const counts = `${poll.entities} entities decoded (${poll.vehicles} vehicles, ${poll.trip_updates} trip updates, ${poll.alerts} alerts), ${poll.stored} rows stored`;
  const rejects = `${Object.values(poll.rejected).reduce((a, b) => a + (b ?? 0), 0)} rejected${rejected ? `: ${rejected}` : ''}`;
  const matching = describeMatching(poll.matching, hasSchedule);
  const stops = poll.stop_events ? describeStopEvents(poll.stop_events) : null;
  const findings = describeFindings(poll.findings);
  const extra = [matching, stops, findings, poll.error ? `error: ${poll.error}` : null].filter(Boolean);
  return `${head}\n  ${counts}\n  ${rejects}${extra.map((line) => `\n  ${line}`).join('')}`;
}

export const ingestCommand: Command = {
  name: 'ingest',
  summary: 'Poll every configured feed once and print what was decoded, stored, rejected and matched to the schedule',
  usage: 'ingest --once [--json] [--config <file>]',
  options: { once: { type: 'boolean' }, json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    once: 'poll each feed once and exit (required: continuous polling is `serve`)',
    json: 'one JSON object per feed per line',
    config: 'config file (JSON) declaring feeds and schedules',
  },
  async run({ values, log, useConfig }) {
    if (!values.once) throw new UsageError('ingest needs --once (continuous ingestion runs inside `serve`)');
    const config = loadConfig(values.config as string | undefined);
    useConfig(config);
    if (config.feeds.length === 0)
      throw new UsageError('no feeds configured: declare them in the config file (see docs/guides/configuration.md)');
    const { openRuntime, scheduleForFeed } = await import('../../app/runtime.ts');
    const runtime = await openRuntime(config, { log });
    try {
      const polls = await runtime.pipeline.pollAllOnce();
      const scheduleOf = scheduleForFeed(config, runtime.schedules);
      for (const poll of polls) {
        const feed = config.feeds.find((f) => f.id === poll.feed_id)!;
        if (values.json) {
          print(
            JSON.stringify({
              feed_id: poll.feed_id,
              status: poll.status,
              entities: poll.entities,
              vehicles: poll.vehicles,
              trip_updates: poll.trip_updates,
              alerts: poll.alerts,
              stored: poll.stored,
              rejected: poll.rejected,
              match_rate: poll.matching?.match_rate ?? null,
              matching: poll.matching,
              stop_events: poll.stop_events ?? null,
              findings: poll.findings ?? null,
              ...(poll.error ? { error: poll.error } : {}),
            }),
          );
        } else {
          print(describe(poll, scheduleOf(feed) !== undefined));
        }
      }
      return polls.some((p) => !isSuccessfulPoll(p.status)) ? 1 : 0;
    } finally {
      await runtime.close();
    }
  },
};
