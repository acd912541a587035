import { formatIdChanges, idChanges } from '../../core/served-id-changes.ts';
import { readServedIds } from '../../store/id-scope.ts';
import { importScheduleVersion } from '../../store/schedule-refresh.ts';
import { UsageError } from '../../core/usage-error.ts';
import { progressReporter } from './progress.ts';
import type { Operation } from './types.ts';

function sourceOf(positionals: readonly string[]): string {
  if (positionals.length !== 1)
    throw new UsageError('import-gtfs takes exactly one source: a zip path, a folder or a URL');
  return positionals[0]!;
}

export const importGtfsOperation: Operation = {
  createsDatabase: () => true,
  check: ({ positionals }) => void sourceOf(positionals),
  async run({ db, config, service, progress }, { values, positionals }, io) {
    const source = sourceOf(positionals);
    const id =
      (values.id as string | undefined) ?? (config.schedules.length === 1 ? config.schedules[0]!.id : 'default');
    const bar = progressReporter(`import ${id}`, progress ?? ({ isTTY: false } as NodeJS.WriteStream));
    // what the API serves now, to say which ids the new schedule changes (never silently)
    const servedIds = async () => service?.servedIds?.() ?? (await readServedIds(db, config));
    const before = await servedIds();
    try {
      // a new version: recorded, today and later re-expanded with it, in the import's transaction
      const { summary, version, expanded } = await importScheduleVersion(db, id, source, {
        timezone: config.reliability.timezone,
        horizonDays: config.reliability.horizon_days,
        onProgress: (p) => bar.update(p.step, p.done, p.total),
      });
      bar.done();
      // the running pipeline resolves trips against the new copy from its next poll
      await service?.scheduleImported(id);
      const ids = idChanges(before, await servedIds());
      if (values.json === true) {
        io.out(JSON.stringify({ ...summary, version, expanded, ids }));
        return 0;
      }
      io.out(
        `imported schedule ${id} from ${summary.location} in ${Math.round(summary.ms)} ms (time zone ` +
          `${summary.timezone})`,
      );
      io.out(
        `  version ${version.version_id}, sha256 ${version.sha256?.slice(0, 12) ?? '?'}…, service ` +
          `${version.service_start_date} to ${version.service_end_date}` +
          `${expanded ? `; scheduled trips expanded ${expanded.from} to ${expanded.to}` : ''}`,
      );
      for (const [table, load] of Object.entries(summary.tables)) {
        if (!load) continue;
        const skipped = load.skipped ? `, ${load.skipped} skipped` : '';
        io.out(`  ${table.padEnd(16)} ${String(load.rows).padStart(9)} rows${skipped}`);
      }
      for (const warning of summary.warnings) io.out(`  warning: ${warning}`);
      if (ids.length) {
        io.out('  served ids change: ids two schedules share are served as <prefix>:<id> (docs/guides/api.md)');
        for (const line of formatIdChanges(ids)) io.out(`    ${line}`);
      }
      return 0;
    } finally {
      bar.done();
    }
  },
};
