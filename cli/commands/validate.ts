import type { ScheduleIndex } from '../../core/ports.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../../core/usage-error.ts';
import { parseHeaders } from '../init/run.ts';
import { print } from '../output.ts';
import type { SnapshotReport, ValidateSummary } from '../validate.ts';

const SCHEDULE_ID = 'validate';

/** The schedule in an in-memory database of this process alone: nothing is written anywhere. */
async function loadSchedule(source: string): Promise<{ index: ScheduleIndex; close: () => void }> {
  const [{ Db }, { importGtfs }, { loadScheduleIndex }] = await Promise.all([
    import('../../store/db.ts'),
    import('../../store/gtfs-import.ts'),
    import('../../store/schedule-index.ts'),
  ]);
  const db = await Db.open(':memory:');
  try {
    await importGtfs(db, SCHEDULE_ID, source);
    return { index: await loadScheduleIndex(db, SCHEDULE_ID), close: () => void db.close() };
  } catch (err) {
    await db.close();
    throw new UsageError(`--schedule ${source}: ${(err as Error).message}`);
  }
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

function describeSnapshot(r: SnapshotReport): string {
  const head =
    r.content === null
      ? `${r.source}: not a GTFS-Realtime message`
      : `${r.source}: ${r.content}, header ${r.header_timestamp ?? 'without timestamp'}`;
  if (r.findings.length === 0) return `${head}: no findings`;
  const whole = r.content === null ? '(body)' : '(header)';
  const lines = r.findings.map(
    (f) => `  ${f.rule} ${f.severity.padEnd(7)} ${f.entity_id === null ? whole : `entity ${f.entity_id}`}: ${f.reason}`,
  );
  return [head, ...lines].join('\n');
}

function describeSummary(s: ValidateSummary): string {
  const lines = [
    `validated ${plural(s.snapshots, 'snapshot')}: ${s.with_findings} with findings, ${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')}`,
  ];
  if (s.rules.length) {
    const width = Math.max(8, ...s.rules.map((r) => String(r.findings).length));
    lines.push(`  rule severity ${'findings'.padStart(width)} snapshots  title (first finding)`);
    for (const r of s.rules) {
      const where = `${r.example.source}${r.example.entity_id === null ? '' : `, entity ${r.example.entity_id}`}`;
      lines.push(
        `  ${r.rule} ${r.severity.padEnd(8)} ${String(r.findings).padStart(width)} ${String(r.snapshots).padStart(9)}  ${r.title} (${where})`,
      );
    }
  }
  return lines.join('\n');
}

export const validateCommand: Command = {
  name: 'validate',
  summary:
    "Check GTFS-Realtime files, folders or URLs against the feed rules (MobilityData's validator ids); no database or service needed",
  usage: "validate [--schedule <zip|folder|url>] [--series] [--header 'Name: value']… <file|folder|url>... [--json]",
  allowPositionals: true,
  options: {
    schedule: { type: 'string' },
    series: { type: 'boolean' },
    header: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  },
  optionHelp: {
    schedule: 'the static GTFS the feed refers to: trips, routes, stops, area and shapes are checked against it',
    series:
      'the files are consecutive snapshots of one feed, in the order given (folders by name): E017, E018 and W007 compare each with the one before',
    header: "'Name: value' sent with every URL request (an API key the agency requires); repeatable",
    json: 'one JSON document: every snapshot with its findings, and the summary per rule',
  },
  async run({ values, positionals }) {
    if (positionals.length === 0) throw new UsageError('validate needs at least one GTFS-Realtime file, folder or URL');
    const headers = parseHeaders((values.header as unknown as string[] | undefined) ?? []);
    const { resolveSources, SourceError, validateSources } = await import('../validate.ts');
    let sources: ReturnType<typeof resolveSources>;
    try {
      sources = resolveSources(positionals);
    } catch (err) {
      if (err instanceof SourceError) throw new UsageError(err.message);
      throw err;
    }
    if (sources.length === 0) throw new UsageError(`no files in ${positionals.join(', ')}`);
    const schedule = values.schedule ? await loadSchedule(values.schedule as string) : undefined;
    const json = values.json === true;
    const reports: SnapshotReport[] = [];
    try {
      const summary = await validateSources(sources, {
        schedule: schedule?.index,
        series: values.series === true,
        headers,
        onSnapshot: (report) => (json ? reports.push(report) : print(describeSnapshot(report))),
      });
      const code = summary.errors > 0 ? 1 : 0;
      if (json) print(JSON.stringify({ snapshots: reports, summary, exit_code: code }));
      else print(describeSummary(summary));
      return code;
    } catch (err) {
      if (err instanceof SourceError) throw new UsageError(err.message);
      throw err;
    } finally {
      schedule?.close();
    }
  },
};
