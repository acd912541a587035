// Real brokers for tests and benches: Debian's redis-server and nats-server (JetStream), each on a
// loopback port the kernel just handed out and a temp dir of its own, killed with the process.
// `.ci/run` installs both; a machine without one gets a clear skip reason, not a failure.
import { freePort } from './wait.ts';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const REDIS_SERVER = process.env.TRANSIT_REDIS_SERVER ?? '/usr/bin/redis-server';
export const NATS_SERVER = process.env.TRANSIT_NATS_SERVER ?? '/usr/sbin/nats-server';

/** false, or why the broker cannot be started here (for tap's `skip`). */
export function brokerMissing(kind: 'redis' | 'nats'): false | string {
  const bin = kind === 'redis' ? REDIS_SERVER : NATS_SERVER;
  if (existsSync(bin)) return false;
  const pkg = kind === 'redis' ? 'redis-server' : 'nats-server';
  return `${bin} is absent: install Debian's ${pkg} (.ci/run does) to run the broker tests`;
}

export interface BrokerServer {
  readonly kind: 'redis' | 'nats';
  readonly port: number;
  /** redis://127.0.0.1:port or nats://127.0.0.1:port */
  readonly url: string;
  readonly dir: string;
  /** Stops the server (SIGKILL when `crash`) and keeps its data dir. */
  stop(options?: { crash?: boolean }): Promise<void>;
  /** Starts it again on the same port and data (after stop). */
  restart(): Promise<void>;
  /** Stops it and removes its data dir. */
  close(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitListening(child: ChildProcess, port: number, output: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`broker exited before listening: ${output().slice(-2000)}`);
    if (await canConnect(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`broker did not listen on ${port} within 10 s: ${output().slice(-2000)}`);
}

function argsFor(kind: 'redis' | 'nats', port: number, dir: string): [string, string[]] {
  if (kind === 'redis') {
    return [
      REDIS_SERVER,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--daemonize',
        'no',
        '--logfile',
        '',
        '--protected-mode',
        'yes',
      ],
    ];
  }
  return [NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir]];
}

/** Starts one broker; rejects if the binary is absent (check brokerMissing first). */
export async function startBroker(kind: 'redis' | 'nats'): Promise<BrokerServer> {
  const missing = brokerMissing(kind);
  if (missing) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), `transit-${kind}-`));
  let port = 0;
  let child: ChildProcess | null = null;
  const launch = async (fixedPort?: number) => {
    // another process may take the port between freePort and the server's bind: try a few
    for (let attempt = 0; attempt < 5; attempt++) {
      port = fixedPort ?? (await freePort());
      const [bin, args] = argsFor(kind, port, dir);
      let out = '';
      const c = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      c.stdout!.on('data', (d: Buffer) => {
        out = (out + d.toString('utf8')).slice(-8000);
      });
      c.stderr!.on('data', (d: Buffer) => {
        out = (out + d.toString('utf8')).slice(-8000);
      });
      children.add(c);
      c.once('exit', () => {
        children.delete(c);
        // a forked background child (AOF rewrite) may hold the pipes open after the server exits
        c.stdout!.destroy();
        c.stderr!.destroy();
      });
      try {
        await waitListening(c, port, () => out);
        child = c;
        return;
      } catch (err) {
        c.kill('SIGKILL');
        if (fixedPort !== undefined && attempt < 4) {
          await new Promise((r) => setTimeout(r, 200));
          continue;
        }
        if (attempt === 4 || !/in use|bind/i.test(String(err))) throw err;
      }
    }
  };
  await launch();
  const stop = async (options: { crash?: boolean } = {}) => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill(options.crash ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };
  return {
    kind,
    get port() {
      return port;
    },
    get url() {
      return `${kind}://127.0.0.1:${port}`;
    },
    dir,
    stop,
    restart: () => launch(port),
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The server's version line, for bench output. */
export function brokerVersion(kind: 'redis' | 'nats'): string {
  const r = spawnSync(kind === 'redis' ? REDIS_SERVER : NATS_SERVER, ['--version'], { encoding: 'utf8' });
  return (r.stdout || r.stderr).trim().split('\n')[0] ?? '';
}
