// The operator's end of the admin channel: is a service answering on the socket, and run a
// command there.
import { request } from 'node:http';
import { COMMAND_PATH, PING_PATH, type CommandRequest, type CommandResult, type PingAnswer } from './protocol.ts';
import { socketAddress } from './socket-path.ts';

export class AdminCallError extends Error {
  override name = 'AdminCallError';
}

interface Answer {
  status: number;
  body: string;
}

function call(path: string, method: string, urlPath: string, body?: string, timeoutMs?: number): Promise<Answer> {
  let socket: ReturnType<typeof socketAddress>;
  try {
    socket = socketAddress(path);
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        socketPath: socket.address,
        method,
        path: urlPath,
        headers:
          body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    if (timeoutMs !== undefined)
      req.setTimeout(timeoutMs, () => req.destroy(new AdminCallError(`no answer on ${path} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  }).finally(() => socket.release());
}

/** The service answering on the socket, or null when none does (no file, or a stale one). */
export async function pingAdmin(path: string, timeoutMs = 5_000): Promise<PingAnswer | null> {
  try {
    const answer = await call(path, 'GET', PING_PATH, undefined, timeoutMs);
    return answer.status === 200 ? (JSON.parse(answer.body) as PingAnswer) : null;
  } catch {
    return null;
  }
}

/** Runs a command in the service; no time limit (exports and imports take as long as they take). */
export async function runAdminCommand(path: string, name: string, command: CommandRequest): Promise<CommandResult> {
  const answer = await call(path, 'POST', `${COMMAND_PATH}${encodeURIComponent(name)}`, JSON.stringify(command));
  if (answer.status !== 200) {
    let message = answer.body;
    try {
      message = (JSON.parse(answer.body) as { error?: string }).error ?? message;
    } catch {
      // not JSON: the text as it came
    }
    throw new AdminCallError(`the service on ${path} refused ${name}: ${message}`);
  }
  return JSON.parse(answer.body) as CommandResult;
}
