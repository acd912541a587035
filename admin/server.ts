// The admin channel's listener: node:http on a Unix socket that only the service's user can
// open (mode 0600). A socket file left by a killed process is detected (nothing answers on it)
// and replaced; one that answers belongs to a live process and is never taken over.
import { chmodSync, lstatSync, type Stats, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import {
  COMMAND_PATH,
  METRICS_PATH,
  PING_PATH,
  type CommandRequest,
  type CommandResult,
  type PingAnswer,
} from './protocol.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import { makePrivateDirSync } from '../core/private-files.ts';
import { socketAddress } from './socket-path.ts';

const MAX_BODY_BYTES = 1024 * 1024;

export type CommandHandler = (request: CommandRequest) => Promise<CommandResult>;

export interface AdminServerOptions {
  /** socket path (relative paths are from the process's working directory) */
  path: string;
  ping: () => PingAnswer;
  commands: Readonly<Record<string, CommandHandler>>;
  /** Prometheus text exposition for GET /metrics; absent: 404 */
  metricsText?: () => Promise<string>;
  log?: Logger;
}

export interface AdminServer {
  readonly path: string;
  /** stops listening, waits for commands in flight, removes the socket file */
  close(): Promise<void>;
}

export class AdminSocketInUseError extends Error {
  override name = 'AdminSocketInUseError';
}

/** True when a process accepts connections on the socket. */
export function socketAnswers(address: string, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(address);
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(true)); // accepted but slow: alive all the same
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function claim(path: string, address: string): Promise<void> {
  let stats: Stats;
  try {
    stats = lstatSync(address);
  } catch {
    return;
  }
  if (!stats.isSocket())
    throw new AdminSocketInUseError(`${path} exists and is not a socket: move it or set admin.socket`);
  if (await socketAnswers(address)) {
    throw new AdminSocketInUseError(
      `another process answers on the admin socket ${path}: is a second service configured with the same admin.socket?`,
    );
  }
  // left by a process that was killed: nothing listens on it any more
  unlinkSync(address);
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RangeError('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseRequest(text: string): CommandRequest {
  const body = JSON.parse(text || '{}') as Partial<CommandRequest>;
  const values = body.values ?? {};
  const positionals = body.positionals ?? [];
  if (
    typeof values !== 'object' ||
    Array.isArray(values) ||
    !Array.isArray(positionals) ||
    !positionals.every((p) => typeof p === 'string')
  ) {
    throw new TypeError('expected {"values": {...}, "positionals": [...]}');
  }
  return { values, positionals };
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const log = componentLogger(options.log, 'admin');
  // a socket configured apart from the database gets a folder of its own user's only
  makePrivateDirSync(dirname(resolve(options.path)));
  // held while the server runs: a long path is reached through a descriptor of its folder
  const socket = socketAddress(options.path);
  const { address } = socket;
  try {
    await claim(options.path, address);
  } catch (err) {
    socket.release();
    throw err;
  }
  const inFlight = new Set<Promise<unknown>>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === PING_PATH) return send(res, 200, JSON.stringify(options.ping()));
    if (req.method === 'GET' && url === METRICS_PATH) {
      if (!options.metricsText)
        return send(res, 404, JSON.stringify({ error: 'metrics are not available in this build' }));
      return send(res, 200, await options.metricsText(), 'text/plain; version=0.0.4; charset=utf-8');
    }
    if (req.method === 'POST' && url.startsWith(COMMAND_PATH)) {
      const name = decodeURIComponent(url.slice(COMMAND_PATH.length));
      const command = Object.hasOwn(options.commands, name) ? options.commands[name] : undefined;
      if (!command) return send(res, 404, JSON.stringify({ error: `unknown command ${JSON.stringify(name)}` }));
      let request: CommandRequest;
      try {
        request = parseRequest(await readBody(req));
      } catch (err) {
        return send(res, 400, JSON.stringify({ error: (err as Error).message }));
      }
      const result = command(request);
      inFlight.add(result);
      try {
        return send(res, 200, JSON.stringify(await result));
      } finally {
        inFlight.delete(result);
      }
    }
    return send(res, 404, JSON.stringify({ error: `no ${req.method} ${url}` }));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'request failed');
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: (err as Error)?.message ?? String(err) }));
      else res.destroy();
    });
  });
  // exports and imports can take minutes: the client waits as long as the command runs
  server.requestTimeout = 0;
  server.timeout = 0;

  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => {
      socket.release();
      reject(err);
    };
    server.once('error', failed);
    // the socket is created by bind() inside listen(): a strict umask for that call leaves no
    // moment in which another user could connect; chmod below is for filesystems ignoring it
    const previous = process.umask(0o177);
    try {
      server.listen(address, () => {
        server.off('error', failed);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
  chmodSync(address, 0o600);
  const inode = lstatSync(address).ino;
  server.on('error', (err) => log.error({ err }, 'socket error'));

  let closing: Promise<void> | null = null;
  return {
    path: options.path,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await Promise.allSettled([...inFlight]);
        server.closeAllConnections();
        await closed;
        try {
          // only our own file: a successor may already have claimed the path
          if (lstatSync(address).ino === inode) unlinkSync(address);
        } catch {
          // already gone
        }
        socket.release();
      })();
      return closing;
    },
  };
}
