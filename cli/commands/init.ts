import type { Command } from '../command.ts';
import { UsageError } from '../../core/usage-error.ts';
import { STDIO } from '../run-operation.ts';

export const initCommand: Command = {
  name: 'init',
  summary:
    'Set up your own agency: check its GTFS and realtime feeds, write a commented config, import the schedule, ' +
    'create a first key',
  usage:
    "init --gtfs <url|zip|folder> [--vehicles <url>] [--trip-updates <url>] [--alerts <url>] [--header 'Name: " +
    "value']… [--dir <folder>] [--id <name>] [--port <n>] [--force]",
  options: {
    gtfs: { type: 'string' },
    vehicles: { type: 'string' },
    'trip-updates': { type: 'string' },
    alerts: { type: 'string' },
    header: { type: 'string', multiple: true },
    dir: { type: 'string' },
    id: { type: 'string' },
    port: { type: 'string' },
    force: { type: 'boolean' },
  },
  optionHelp: {
    gtfs: 'the static GTFS: an http(s) URL, a file:// URL, a zip or a folder (required)',
    vehicles: 'GTFS-Realtime VehiclePositions: http(s) URL, file:// URL or path',
    'trip-updates': 'GTFS-Realtime TripUpdates',
    alerts: 'GTFS-Realtime ServiceAlerts (or JSON alerts in the format of pipeline/ALERTS-JSON.md)',
    header: "'Name: value' sent with every realtime request (an API key the agency requires); repeatable",
    dir: 'folder for the config, database, exports and snapshot (default data/agency; created 0700)',
    id: 'schedule id, prefix of the feed ids (default: from agency.txt, e.g. caltrain)',
    port: 'port written to the config (default 8080)',
    force: 'overwrite an existing config (with a new signing_secret) and reuse an existing database',
  },
  async run({ values }) {
    const { runInit, DEFAULT_DIR } = await import('../init/run.ts');
    if (typeof values.gtfs !== 'string' || !values.gtfs)
      throw new UsageError('init needs --gtfs <url|zip|folder>: the static schedule the realtime feeds refer to');
    const port = values.port === undefined ? 8080 : Number(values.port);
    const raw = values as Record<string, unknown>;
    return runInit(
      {
        gtfs: values.gtfs,
        feeds: {
          vehicles: values.vehicles as string | undefined,
          'trip-updates': values['trip-updates'] as string | undefined,
          alerts: values.alerts as string | undefined,
        },
        headers: (raw.header as string[] | undefined) ?? [],
        dir: (values.dir as string | undefined) ?? DEFAULT_DIR,
        id: values.id as string | undefined,
        port,
        force: values.force === true,
      },
      STDIO,
    );
  },
};
