// A raw HTTP/1.1 client: sends exactly the bytes given (any method, header or path), reads
// the response to the end. fetch refuses much of what a fuzzer needs to send.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Resolves null when the server closed the connection without a response (malformed request). */
export function rawRequest(
  port: number,
  bytes: Buffer | string,
  options: { head?: boolean; timeoutMs?: number } = {},
): Promise<RawResponse | null> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks)));
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const parsed = parse(Buffer.concat(chunks));
      if (parsed) resolve(parsed);
      else reject(new Error(`no response within ${timeoutMs} ms to ${JSON.stringify(String(bytes).slice(0, 200))}`));
    }, timeoutMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (complete(Buffer.concat(chunks), options.head === true)) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', finish);
    socket.write(bytes);
  });
}

function split(buf: Buffer): { head: string; body: Buffer } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  return { head: buf.subarray(0, end).toString('latin1'), body: buf.subarray(end + 4) };
}

function complete(buf: Buffer, head: boolean): boolean {
  const parts = split(buf);
  if (!parts) return false;
  if (head) return true;
  const length = /\r\ncontent-length: *(\d+)/i.exec(parts.head);
  if (length) return parts.body.length >= Number(length[1]);
  return / (204|304) /.test(parts.head.split('\r\n')[0]!);
}

function parse(buf: Buffer): RawResponse | null {
  const parts = split(buf);
  if (!parts) return null;
  const [statusLine, ...lines] = parts.head.split('\r\n');
  const m = /^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '');
  if (!m) return null;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(m[1]), headers, body: parts.body.toString('utf8') };
}
