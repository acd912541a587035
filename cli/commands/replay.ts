import { loadConfig, type Config } from '../../core/config.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../../core/usage-error.ts';
import { print } from '../output.ts';
import { progressReporter } from '../../admin/operations/progress.ts';

const n = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 1 });
const iso = (ms: number | null) => (ms === null ? '—' : new Date(ms).toISOString());
const plural = (v: number, word: string) => `${n(v)} ${word}${v === 1 ? '' : 's'}`;
const counts = (o: Record<string, number | undefined>) =>
  Object.entries(o)
    .filter(([, v]) => v)
    .map(([k, v]) => `${k} ${n(v!)}`)
    .join(', ');

/** The replayed feed allows old snapshots: an archive is old by nature. */
function withOldSnapshots(config: Readonly<Config>, feedId: string): Readonly<Config> {
  return { ...config, feeds: config.feeds.map((f) => (f.id === feedId ? { ...f, allow_old_snapshots: true } : f)) };
}

export const replayCommand: Command = {
  name: 'replay',
  summary:
    'Ingest archived GTFS-RT snapshots of one feed (files or folders) in header-time order, then reliability for their days',
  usage: 'replay --feed <id> <file or folder>... [--json] [--config <file>]',
  allowPositionals: true,
  options: { feed: { type: 'string' }, json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    feed: 'the configured feed the snapshots were captured from (its schedule and settings apply)',
    json: 'the summary as one JSON document',
    config: 'config file (JSON); TRANSIT_DB selects the database (the service must be stopped: DuckDB locks the file)',
  },
  async run({ values, positionals, log, useConfig }) {
    const feedId = values.feed as string | undefined;
    if (!feedId) throw new UsageError('replay needs --feed <id>: the feed the snapshots belong to');
    if (positionals.length === 0) throw new UsageError('replay needs at least one snapshot file or folder');
    const config = loadConfig(values.config as string | undefined);
    useConfig(config);
    const feed = config.feeds.find((f) => f.id === feedId);
    if (!feed) {
      throw new UsageError(
        `unknown feed ${JSON.stringify(feedId)}; configured: ${config.feeds.map((f) => f.id).join(', ') || 'none'}`,
      );
    }
    if (feed.kind !== 'gtfs-rt')
      throw new UsageError(`replay reads GTFS-RT protobuf files; feed ${feedId} is ${feed.kind}`);
    const [{ listFiles, replaySnapshots, scanSnapshots }, { openRuntime }, { refreshReplayedDays }] = await Promise.all(
      [import('../../pipeline/replay.ts'), import('../../app/runtime.ts'), import('../replay-reliability.ts')],
    );
    let files: string[];
    try {
      files = listFiles(positionals);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new UsageError(
        e.code === 'ENOENT' ? `no such file or folder: ${e.path}` : `cannot read the snapshots: ${e.message}`,
      );
    }
    const scan = scanSnapshots(files);
    const json = values.json === true;
    const runtime = await openRuntime(withOldSnapshots(config, feedId), { log });
    const progress = progressReporter(`replay ${feedId}`);
    try {
      const summary = await replaySnapshots(runtime.pipeline, feedId, scan, {
        onProgress: (done, total) => progress.update(`${done}/${total}`, done, total),
      });
      progress.done();
      const reliability =
        summary.first_header_ms === null
          ? null
          : await refreshReplayedDays(runtime.db, config, feed, {
              from_ms: summary.first_header_ms,
              to_ms: summary.last_header_ms!,
            });
      if (json) {
        print(JSON.stringify({ ...summary, reliability }));
      } else {
        const m = summary.matching;
        const lines = [
          `replay ${feedId}: ${plural(summary.files, 'file')}, ${plural(summary.snapshots, 'snapshot')} from ${iso(summary.first_header_ms)} to ${iso(summary.last_header_ms)}`,
          `  snapshots: ${counts({ stored: summary.outcomes.ok, 'already stored': summary.outcomes.duplicate, rejected: summary.outcomes.rejected, 'failed to decode': summary.outcomes.decode_error }) || 'none'}` +
            (Object.keys(summary.skipped).length ? `; not replayed: ${counts(summary.skipped)}` : ''),
          `  ${n(summary.rows_stored)} rows stored; ${counts(summary.rejected) || 'nothing'} rejected`,
          `  feed rules: ${counts(Object.fromEntries(Object.entries(summary.findings).sort(([a], [b]) => a.localeCompare(b)))) || 'no findings'}`,
          `  trips matched the schedule: ${m.trips ? `${n(m.matched)} of ${n(m.trips)} (${Math.round((100 * m.matched) / m.trips)} %)` : 'no trips looked up'}`,
          `  ${n(summary.snapshots_per_s)} snapshots/s, ${n(Math.round(summary.rows_per_s))} rows/s (${n(summary.seconds)} s)`,
        ];
        if (reliability) {
          lines.push(
            reliability.schedule_id === null
              ? '  reliability: no schedule serves this feed, nothing to compare with'
              : `  reliability (${reliability.schedule_id}): ${
                  reliability.days.length
                    ? `${plural(reliability.days.length, 'service day')} observed ` +
                      `(${reliability.days[0]} … ${reliability.days.at(-1)}), ${n(reliability.scheduled_trips)} scheduled trips expanded, ` +
                      `${reliability.finalized.length} finalized`
                    : 'no trip observed'
                }`,
          );
        }
        print(lines.join('\n'));
      }
      return summary.snapshots === 0 || (summary.outcomes.decode_error ?? 0) > 0 ? 1 : 0;
    } finally {
      progress.done();
      await runtime.close();
    }
  },
};
