import { createServer } from 'node:net';

// Why a port cannot be listened on. uWS reports a failed listen as `false`, without the reason,
// and the reason decides what an operator does next (stop the other process, pick another port,
// run with the right to bind below 1024), so the kernel is asked through node:net. The same
// question asked before a service starts makes a taken port fail at once, not after the
// database is opened and the schedules are loaded.

/** The port could not be listened on; `code` is the errno name when it could be found. */
export class ListenError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string | null,
  ) {
    super(`could not listen on ${host}:${port}: ${describe(code)}`);
    this.name = 'ListenError';
  }
}

function describe(code: string | null): string {
  switch (code) {
    case 'EADDRINUSE':
      return 'the port is already in use by another process';
    case 'EACCES':
      return 'not allowed to listen on this port (ports below 1024 need privileges)';
    case 'EADDRNOTAVAIL':
      return 'this host address does not belong to the machine';
    case null:
      return 'the reason is unknown (the port looked free when checked again)';
    default:
      return code;
  }
}

/**
 * Binds the address for a moment and lets it go: the errno name, or null when it is free. node:net
 * sets no SO_REUSEPORT, so this fails on a port held by any listener, uWS's shared ones included.
 */
export function whyListenFails(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/**
 * Fails with a ListenError when the port cannot be listened on now. The server's own listen
 * stays the authority (it is exclusive): this only makes the common case fail early.
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const code = await whyListenFails(host, port);
  if (code) throw new ListenError(host, port, code);
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '::0']);
const isLoopback = (host: string) => /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === 'localhost';
const urlHost = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export interface ListenAddress {
  /** the address bound, as a URL: what the banner says it listens on */
  bound: string;
  /** a URL this machine can open (a wildcard address is reached through loopback) */
  local: string;
  /** who can reach it, in words, when the address says so: 'this machine only', 'every interface' */
  reach: string | null;
}

/** The start banner's words for a listen address (an operator must not believe a public port is local). */
export function listenAddress(host: string, port: number): ListenAddress {
  const bound = `http://${urlHost(host)}:${port}`;
  if (WILDCARDS.has(host)) {
    const loopback = host.includes(':') ? '[::1]' : '127.0.0.1';
    return { bound, local: `http://${loopback}:${port}`, reach: 'every interface' };
  }
  return { bound, local: bound, reach: isLoopback(host) ? 'this machine only' : null };
}
