import { ConfigError, configFile, parseConfig, readConfigFile, type Config } from '../../core/config.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../../core/usage-error.ts';
import { print } from '../output.ts';
import { listenAddress } from '../../http/listen.ts';

type Raw = Record<string, unknown>;

/** The address actually bound, who can reach it, then `more`: `http://0.0.0.0:8080 (every interface; …)`. */
function listening(server: { host: string; port: number }, more: string): string {
  const { bound, reach } = listenAddress(server.host, server.port);
  return `${bound} (${reach ? `${reach}; ` : ''}${more})`;
}

/** The file's settings with the command line's on top. */
function fileWithFlags(file: string | undefined, flags: Raw): Raw {
  const raw = readConfigFile(file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ConfigError([`config file ${file}: not a JSON object`]);
  return { ...(raw as Raw), ...flags };
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the pipeline and the HTTP API in one process (--demo: on the generated demo network)',
  usage: 'serve [--config <file>] [--demo] [--port <n>] [--host <address>] [--role all|ingest|edge]',
  options: {
    config: { type: 'string' },
    demo: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
    role: { type: 'string' },
  },
  optionHelp: {
    config: "config file (JSON); TRANSIT_PORT and TRANSIT_DB override it. With --demo: merged over the demo's config",
    demo: 'generate the demo city, replay it through a local GTFS-RT simulator, print demo keys (listens on 127.0.0.1)',
    port: 'listen port (0 picks a free one); overrides the config and TRANSIT_PORT',
    host: 'listen address (0.0.0.0: every interface); overrides the config',
    role:
      'all (default: one process), ingest (pipeline, database, jobs) or edge (REST and SSE from the broker); ' +
      'ingest and edge need broker.url',
  },
  async run({ values, log, useConfig }) {
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
      throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
    }
    const host = values.host as string | undefined;
    if (host !== undefined && host.trim() === '')
      throw new UsageError('--host needs an address, e.g. 127.0.0.1 or 0.0.0.0');
    const env = port === undefined ? process.env : { ...process.env, TRANSIT_PORT: String(port) };
    // --demo brings its own config: TRANSIT_CONFIG is not read, an explicit --config is merged over it
    const file = configFile(values.config as string | undefined, values.demo ? {} : process.env);
    const [{ startService, closeOnSignals }, { startDemo, createDemoKeys }] = await Promise.all([
      import('../../app/serve.ts'),
      import('../../app/demo.ts'),
    ]);
    // the file is read again on reload: flags keep applying over it
    const role = values.role as string | undefined;
    if (role !== undefined && !['all', 'ingest', 'edge'].includes(role))
      throw new UsageError(`--role must be all, ingest or edge, got ${JSON.stringify(role)}`);
    const flags: Raw = { ...(host === undefined ? {} : { host }), ...(role === undefined ? {} : { role }) };
    let demo: Awaited<ReturnType<typeof startDemo>> | null = null;
    let read: () => Readonly<Config>;
    if (values.demo) {
      demo = await startDemo(env, fileWithFlags(file, flags));
      const { configWith } = demo;
      read = () => configWith(fileWithFlags(file, flags));
    } else {
      read = () => parseConfig(fileWithFlags(file, flags), env);
    }
    let config: Readonly<Config>;
    try {
      config = demo ? demo.config : read();
    } catch (err) {
      await demo?.simulator.stop();
      throw err;
    }
    useConfig(config);
    if (config.role === 'edge') {
      // REST and SSE from the broker: no database file, no admin socket, no demo keys of its own
      await demo?.simulator.stop();
      const { startEdge } = await import('../../app/edge.ts');
      const edge = await startEdge(config, { log });
      print(
        `transit-api edge listening on ` +
          `${listening(edge.server, `broker ${config.broker.url?.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')}`)}`,
      );
      // SIGHUP would end the process by default: an edge has nothing to reload (no feeds, no jobs)
      const onHangup = () => log.warn('an edge has no config to reload: restart it to apply a change');
      process.on('SIGHUP', onHangup);
      await new Promise<void>((resolve) => {
        closeOnSignals(
          async () => {
            process.off('SIGHUP', onHangup);
            await edge.close();
            resolve();
          },
          (code) => {
            process.exitCode = code;
            resolve();
          },
          log,
        );
      });
      return process.exitCode === undefined ? 0 : Number(process.exitCode);
    }
    const service = await startService(config, { log, reloadFrom: { file: file ?? null, read } }).catch(async (err) => {
      await demo?.simulator.stop();
      throw err;
    });
    print(`transit-api listening on ${listening(service.server, `database ${config.db_path}`)}`);
    print(
      `  docs ${service.url}/docs · OpenAPI ${service.url}/openapi.yaml · status ${service.url}/status · dashboard ` +
        `${service.url}/dashboard`,
    );
    if (service.metricsServer) print(`  metrics ${service.metricsServer.url} (Prometheus)`);
    if (service.admin)
      print(
        `  admin socket ${service.admin.path} (keys, status, reload, backup … while serving; SIGHUP ` +
          `reloads the config)`,
      );
    if (demo) {
      print(`  demo network simulated at ${demo.simulator.url}`);
      print('  demo keys (printed once; new ones on every start):');
      for (const k of await createDemoKeys(service.runtime.db)) {
        print(`    ${k.plan.padEnd(8)} ${k.test ? 'test' : 'live'}  ${k.key}`);
      }
      const example = `curl -H "Authorization: Bearer <key>" ${service.url}/api/v1/alerts`;
      print(`  try: ${example}`);
    }
    // SIGHUP re-reads the config file: feeds and schedules apply at once, the rest after a restart
    const onHangup = () => {
      service.reload().catch((err: unknown) => log.error({ err }, 'reload failed'));
    };
    process.on('SIGHUP', onHangup);
    await new Promise<void>((resolve) => {
      closeOnSignals(
        async () => {
          process.off('SIGHUP', onHangup);
          await service.close();
          await demo?.simulator.stop();
          resolve();
        },
        (code) => {
          process.exitCode = code;
          resolve();
        },
        log,
      );
    });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  },
};
