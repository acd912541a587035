import { loadConfig } from '../../core/config.ts';
import type { Command } from '../cli.ts';
import { UsageError } from '../cli.ts';
import { print } from '../output.ts';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the pipeline and the HTTP API in one process (--demo: on the generated demo network)',
  usage: 'serve [--config <file>] [--demo] [--port <n>]',
  options: { config: { type: 'string' }, demo: { type: 'boolean' }, port: { type: 'string' } },
  optionHelp: {
    config: 'config file (JSON); TRANSIT_PORT and TRANSIT_DB override it',
    demo: 'generate the demo city, replay it through a local GTFS-RT simulator, print demo keys',
    port: 'listen port (0 picks a free one); overrides the config and TRANSIT_PORT',
  },
  async run({ values, log, useConfig }) {
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
      throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
    }
    const env = port === undefined ? process.env : { ...process.env, TRANSIT_PORT: String(port) };
    const [{ startService, closeOnSignals }, { startDemo, createDemoKeys }] = await Promise.all([
      import('../serve.ts'), import('../demo.ts'),
    ]);
    let demo: Awaited<ReturnType<typeof startDemo>> | null = null;
    let config;
    if (values.demo) {
      if (values.config) throw new UsageError('--demo brings its own config; leave out --config');
      demo = await startDemo(env);
      config = demo.config;
    } else {
      config = loadConfig(values.config as string | undefined, env);
    }
    useConfig(config);
    const service = await startService(config, { log }).catch(async (err) => {
      await demo?.simulator.stop();
      throw err;
    });
    print(`transit-api listening on ${service.url} (database ${config.db_path})`);
    print(`  docs ${service.url}/docs · OpenAPI ${service.url}/openapi.yaml · status ${service.url}/status · dashboard ${service.url}/dashboard`);
    if (demo) {
      print(`  demo network simulated at ${demo.simulator.url}`);
      print('  demo keys (printed once; new ones on every start):');
      for (const k of await createDemoKeys(service.runtime.db)) {
        print(`    ${k.plan.padEnd(8)} ${k.test ? 'test' : 'live'}  ${k.key}`);
      }
      const example = `curl -H "Authorization: Bearer <key>" ${service.url}/api/v1/alerts`;
      print(`  try: ${example}`);
    }
    await new Promise<void>((resolve) => {
      closeOnSignals(async () => {
        await service.close();
        await demo?.simulator.stop();
        resolve();
      }, (code) => { process.exitCode = code; resolve(); }, log);
    });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  },
};
