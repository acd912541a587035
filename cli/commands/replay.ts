import { loadConfig, type Config } from '../../core/config.ts';
import type { ArgToken, Command } from '../command.ts';
import { UsageError } from '../../core/usage-error.ts';
import type { ReplaySummary } from '../../pipeline/replay.ts';
import type { ReplayReliability } from '../replay-reliability.ts';
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

/** The replayed feeds allow old snapshots: an archive is old by nature. */
function withOldSnapshots(config: Readonly<Config>, feedIds: readonly string[]): Readonly<Config> {
  return {
    ...config,
    feeds: config.feeds.map((f) => (feedIds.includes(f.id) ? { ...f, allow_old_snapshots: true } : f)),
  };
}

/** `--feed a x.pb y/ --feed b z/`: each feed with the files and folders named after it. */
export function feedArchives(tokens: readonly ArgToken[]): { feed_id: string; paths: string[] }[] {
  const archives: { feed_id: string; paths: string[] }[] = [];
  let first: string | null = null;
  for (const token of tokens) {
    if (token.kind === 'option' && token.name === 'feed') {
      if (!token.value) throw new UsageError('--feed needs a feed id');
      const known = archives.find((a) => a.feed_id === token.value);
      if (known) throw new UsageError(`--feed ${token.value} is given twice: name each feed once, with all its files`);
      archives.push({ feed_id: token.value, paths: [] });
    } else if (token.kind === 'positional') {
      const current = archives.at(-1);
      if (current) current.paths.push(token.value);
      else first ??= token.value;
    }
  }
  if (archives.length === 0) throw new UsageError('replay needs --feed <id>: the feed the snapshots belong to');
  if (first !== null) throw new UsageError(`${first}: name its feed first (--feed <id> <files>…)`);
  return archives;
}

const anomalyWords = (o: Record<string, number | undefined>): string => counts(o) || 'none';

export const replayCommand: Command = {
  name: 'replay',
  summary:
    'Ingest archived GTFS-RT snapshots of one feed or several (files or folders) interleaved in header-time order, then reliability for their days',
  usage: 'replay --feed <id> <file or folder>... [--feed <id> <file or folder>...] [--json] [--config <file>]',
  allowPositionals: true,
  options: { feed: { type: 'string' }, json: { type: 'boolean' }, config: { type: 'string' } },
  optionHelp: {
    feed: 'a configured feed, followed by the snapshots captured from it (its schedule and settings apply); repeat it for the feeds of one agency (vehicle positions and trip updates) to replay them together',
    json: 'the summary as JSON: one document per feed, one per line',
    config: 'config file (JSON); TRANSIT_DB selects the database (the service must be stopped: DuckDB locks the file)',
  },
  async run({ tokens, values, log, useConfig }) {
    const archives = feedArchives(tokens);
    for (const a of archives) {
      if (a.paths.length === 0)
        throw new UsageError(`replay needs at least one snapshot file or folder after --feed ${a.feed_id}`);
    }
    const config = loadConfig(values.config as string | undefined);
    useConfig(config);
    const feeds = archives.map(({ feed_id }) => {
      const feed = config.feeds.find((f) => f.id === feed_id);
      if (!feed) {
        throw new UsageError(
          `unknown feed ${JSON.stringify(feed_id)}; configured: ${config.feeds.map((f) => f.id).join(', ') || 'none'}`,
        );
      }
      if (feed.kind !== 'gtfs-rt')
        throw new UsageError(`replay reads GTFS-RT protobuf files; feed ${feed_id} is ${feed.kind}`);
      return feed;
    });
    const [{ listFiles, replayFeeds, scanSnapshots }, { openRuntime }, { refreshReplayedDays }] = await Promise.all([
      import('../../pipeline/replay.ts'),
      import('../../app/runtime.ts'),
      import('../replay-reliability.ts'),
    ]);
    const scans = archives.map((a) => {
      let files: string[];
      try {
        files = listFiles(a.paths);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        throw new UsageError(
          e.code === 'ENOENT' ? `no such file or folder: ${e.path}` : `cannot read the snapshots: ${e.message}`,
        );
      }
      return { feed_id: a.feed_id, scan: scanSnapshots(files) };
    });
    const headers = scans.flatMap((s) => s.scan.snapshots.map((x) => x.header_ms));
    const json = values.json === true;
    const runtime = await openRuntime(
      withOldSnapshots(
        config,
        feeds.map((f) => f.id),
      ),
      {
        log,
        ...(headers.length ? { stop_events_span: { from_ms: Math.min(...headers), to_ms: Math.max(...headers) } } : {}),
      },
    );
    const label = archives.map((a) => a.feed_id).join(' + ');
    const progress = progressReporter(`replay ${label}`);
    try {
      const summaries = await replayFeeds(runtime.pipeline, scans, {
        onProgress: (done, total) => progress.update(`${done}/${total}`, done, total),
      });
      progress.done();
      let failed = false;
      const out: string[] = [];
      for (const [i, summary] of summaries.entries()) {
        const feed = feeds[i]!;
        failed ||= summary.snapshots === 0 || (summary.outcomes.decode_error ?? 0) > 0;
        const reliability =
          summary.first_header_ms === null
            ? null
            : await refreshReplayedDays(runtime.db, config, feed, {
                from_ms: summary.first_header_ms,
                to_ms: summary.last_header_ms!,
              });
        out.push(json ? JSON.stringify({ ...summary, reliability }) : describeReplay(summary, reliability));
      }
      print(out.join('\n'));
      return failed ? 1 : 0;
    } finally {
      progress.done();
      await runtime.close();
    }
  },
};

function describeReplay(summary: ReplaySummary, reliability: ReplayReliability | null): string {
  const m = summary.matching;
  const se = summary.stop_events;
  const lines = [
    `replay ${summary.feed_id}: ${plural(summary.files, 'file')}, ${plural(summary.snapshots, 'snapshot')} from ${iso(summary.first_header_ms)} to ${iso(summary.last_header_ms)}`,
    `  snapshots: ${counts({ stored: summary.outcomes.ok, 'already stored': summary.outcomes.duplicate, rejected: summary.outcomes.rejected, 'failed to decode': summary.outcomes.decode_error }) || 'none'}` +
      (Object.keys(summary.skipped).length ? `; not replayed: ${counts(summary.skipped)}` : ''),
    `  ${n(summary.rows_stored)} rows stored; ${counts(summary.rejected) || 'nothing'} rejected`,
    `  feed rules: ${counts(Object.fromEntries(Object.entries(summary.findings).sort(([a], [b]) => a.localeCompare(b)))) || 'no findings'}`,
    `  trips matched the schedule: ${m.trips ? `${n(m.matched)} of ${n(m.trips)} (${Math.round((100 * m.matched) / m.trips)} %)` : 'no trips looked up'}`,
    `  stop events: ${n(se.written)} written${se.closed_at_end ? ` (${n(se.closed_at_end)} of trips still running when the archive ended)` : ''}; anomalies: ${anomalyWords(se.anomalies)}`,
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
  return lines.join('\n');
}
