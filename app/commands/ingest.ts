import { loadConfig } from '../../core/config.ts';
import type { FeedPoll } from '../../core/types.ts';
import type { Command } from '../cli.ts';
import { UsageError } from '../cli.ts';

const FAILED: ReadonlySet<FeedPoll['status']> = new Set(['http_error', 'timeout', 'network_error', 'too_large', 'decode_error']);

function describe(poll: FeedPoll): string {
  const rejected = Object.entries(poll.rejected).map(([reason, n]) => `${reason} ${n}`).join(', ');
  const head = `${poll.feed_id}: ${poll.status}${poll.http_status ? ` (HTTP ${poll.http_status})` : ''}`;
  const counts = `${poll.entities} entities decoded (${poll.vehicles} vehicles, ${poll.trip_updates} trip updates, ${poll.alerts} alerts), ${poll.stored} rows stored`;
  const rejects = `${Object.values(poll.rejected).reduce((a, b) => a + (b ?? 0), 0)} rejected${rejected ? `: ${rejected}` : ''}`;
  return `${head}\n  ${counts}\n  ${rejects}${poll.error ? `\n  error: ${poll.error}` : ''}`;
}

export const ingestCommand: Command = {
  name: 'ingest',
  summary: 'Poll every configured feed once and print what was decoded, stored and rejected',
  usage: 'ingest --once [--json] [--config <file>]',
  options: { once: { type: 'boolean' }, json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    once: 'poll each feed once and exit (required: continuous polling is `serve`)',
    json: 'one JSON object per feed per line',
    config: 'config file (JSON) declaring feeds and schedules',
  },
  async run({ values }) {
    if (!values.once) throw new UsageError('ingest needs --once (continuous ingestion runs inside `serve`)');
    const config = loadConfig(values.config as string | undefined);
    if (config.feeds.length === 0) throw new UsageError('no feeds configured: declare them in the config file (see README, Configuration)');
    const { openRuntime } = await import('../runtime.ts');
    const runtime = await openRuntime(config, { log: values.json ? () => undefined : (l) => console.error(l) });
    try {
      const polls = await runtime.pipeline.pollAllOnce();
      for (const poll of polls) {
        if (values.json) {
          console.log(JSON.stringify({
            feed_id: poll.feed_id, status: poll.status, entities: poll.entities, vehicles: poll.vehicles,
            trip_updates: poll.trip_updates, alerts: poll.alerts, stored: poll.stored, rejected: poll.rejected,
            ...(poll.error ? { error: poll.error } : {}),
          }));
        } else {
          console.log(describe(poll));
        }
      }
      return polls.some((p) => FAILED.has(p.status)) ? 1 : 0;
    } finally {
      await runtime.close();
    }
  },
};
