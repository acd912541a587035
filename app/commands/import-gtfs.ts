import { loadConfig } from '../../core/config.ts';
import type { Command } from '../cli.ts';
import { UsageError } from '../cli.ts';
import { progressReporter } from '../progress.ts';

export const importGtfsCommand: Command = {
  name: 'import-gtfs',
  summary: 'Import a static GTFS schedule (zip, folder or URL) into the database, replacing the previous copy',
  usage: 'import-gtfs <zip path, folder or URL> [--id <schedule id>] [--config <file>]',
  allowPositionals: true,
  options: { id: { type: 'string' }, config: { type: 'string' } },
  optionHelp: {
    id: 'schedule id (default: the only configured schedule, else "default")',
    config: 'config file (JSON); TRANSIT_DB overrides the database path',
  },
  async run({ values, positionals }) {
    const source = positionals[0];
    if (!source || positionals.length > 1) throw new UsageError('import-gtfs takes exactly one source: a zip path, a folder or a URL');
    const config = loadConfig(values.config as string | undefined);
    const id = (values.id as string | undefined)
      ?? (config.schedules.length === 1 ? config.schedules[0]!.id : 'default');
    const [{ Db, dbOptions }, { importGtfs }] = await Promise.all([import('../../store/db.ts'), import('../../store/gtfs-import.ts')]);
    const db = await Db.open(config.db_path, dbOptions(config.store));
    const progress = progressReporter(`import ${id}`);
    try {
      const summary = await importGtfs(db, id, source, (p) => progress.update(p.step, p.done, p.total));
      progress.done();
      console.log(`imported schedule ${id} from ${summary.location} in ${Math.round(summary.ms)} ms (time zone ${summary.timezone})`);
      for (const [table, load] of Object.entries(summary.tables)) {
        if (!load) continue;
        const skipped = load.skipped ? `, ${load.skipped} skipped` : '';
        console.log(`  ${table.padEnd(16)} ${String(load.rows).padStart(9)} rows${skipped}`);
      }
      for (const warning of summary.warnings) console.log(`  warning: ${warning}`);
      return 0;
    } finally {
      progress.done();
      await db.close();
    }
  },
};
