// The socket layer: the only file that imports uWebSockets.js. It turns uWS requests into
// ApiRequests, writes ApiResponses corked and with backpressure, and shuts down gracefully. An
// event stream's writes are http/sse-socket-sink.ts's, on the uWS response this file hands it.
import { STATUS_CODES } from 'node:http';
import uWS from 'uWebSockets.js';
import { ApiError } from '../core/errors.ts';
import { componentLogger, defaultLogger, type Logger } from '../core/logger.ts';
import type { SendBudget } from '../stream/send-budget.ts';
import { headerBlock } from './header-block.ts';
import { baseHeaders, type HeaderList, type HeaderRun } from './headers.ts';
import { BODY_IDLE_TIMEOUT_MS, bodyTimeout, checkRequestHead } from './http-edge.ts';
import { ListenError, whyListenFails } from './listen.ts';
import { renderProblem } from './problem.ts';
import { SseSocketSink } from './sse-socket-sink.ts';
import type { ApiRequest, ApiResponse, FileBody, PipedBody, StreamReply } from './types.ts';
import { DEFAULT_CONFIG } from '../core/config.ts';

type HttpResponse = uWS.HttpResponse;

/** What the server needs from the application (RequestHandler and ForwardingHandler implement it). */
export interface Handler {
  handle(req: ApiRequest): Promise<ApiResponse>;
  /** as handle(), answered at once when the application can (no Promise): written inside uWS's handler */
  handleNow?(req: ApiRequest): ApiResponse | Promise<ApiResponse>;
  /** flush metering and stop timers, after in-flight requests finished */
  close(): Promise<void>;
}

export interface ServerOptions {
  handler: Handler;
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** bodies above this are cut off and answered 413 by the request chain */
  maxBodyBytes?: number;
  shutdownTimeoutMs?: number;
  /**
   * sse.buffer_bytes (default 1 MiB). The stream hub cuts a client this far behind; the socket
   * layer's own backstop, for a producer that ignores backpressure, is 8 times as far, so that
   * the hub (which lets one large chunk through) always decides first in practice.
   */
  streamBufferBytes?: number;
  /**
   * One budget for the unsent bytes of every event stream (sse.send_budget_bytes,
   * sse.stall_timeout_s): each sink reports what it holds; the budget cuts the longest-stalled.
   * The server starts and stops its sweep.
   */
  sendBudget?: SendBudget;
  log?: Logger;
}

export interface RunningServer {
  readonly host: string;
  readonly port: number;
  readonly inFlight: number;
  readonly openStreams: number;
  /** stop accepting, finish in-flight requests, end streams, flush the handler, drop idle sockets */
  close(): Promise<void>;
}

/** The package silently falls back to a slow JS server when its binary fails to load. */
export function assertNativeUws(): void {
  if (!String(uWS.App).includes('[native code]')) {
    throw new Error('uWebSockets.js did not load its native binary (it fell back to a JS server); refusing to start');
  }
}

/**
 * LIBUS_LISTEN_EXCLUSIVE_PORT, as the addon exports it (its typings declare the value only inside
 * an enum the addon does not export). Checked, since undefined would mean the default listen.
 */
const EXCLUSIVE_PORT = (uWS as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT?: unknown }).LIBUS_LISTEN_EXCLUSIVE_PORT;
type ListenWithOptions = (
  host: string,
  port: number,
  options: number,
  cb: (socket: uWS.us_listen_socket | false) => void,
) => void;

const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

const SMALL_BODY = 64 * 1024;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Exchange {
  aborted: boolean;
  finished: boolean;
  /** res.onAborted registered: the answer comes after uWS's handler returned */
  watched: boolean;
  /** a file download waiting for the socket to drain is woken by the abort */
  onAbort?: () => void;
}

/** Bytes read from disk per write: large enough for few syscalls, small against the heap. */
const FILE_CHUNK = 256 * 1024;

export function startServer(options: ServerOptions): Promise<RunningServer> {
  assertNativeUws();
  const log = componentLogger(options.log, 'server');
  const maxBody = options.maxBodyBytes ?? DEFAULT_CONFIG.api.max_body_bytes;
  const hardLimit = 8 * (options.streamBufferBytes ?? DEFAULT_CONFIG.sse.buffer_bytes);
  const app = uWS.App();
  const sinks = new Set<SseSocketSink>();
  options.sendBudget?.start();
  let inFlight = 0;
  let closing = false;
  let drained: (() => void) | null = null;

  const finish = (ex: Exchange) => {
    if (ex.finished) return;
    ex.finished = true;
    inFlight--;
    if (inFlight === 0 && drained) drained();
  };

  const writeHead = (res: HttpResponse, status: number, headers: HeaderList, run?: HeaderRun) => {
    res.writeStatus(statusLine(status));
    // two calls for the whole section, the same bytes as one call per header (http/header-block.ts)
    let from = 0;
    const shared = run?.list;
    if (shared?.length && headers[0] === shared[0] && headers[shared.length - 1] === shared[shared.length - 1]) {
      res.writeHeader(shared[0]![0], run!.block);
      from = shared.length;
    }
    if (from < headers.length) res.writeHeader(headers[from]![0], headerBlock(headers, from));
  };

  const sendBody = (res: HttpResponse, ex: Exchange, body: string | Uint8Array) => {
    if (typeof body === 'string' ? body.length < SMALL_BODY / 4 : body.byteLength < SMALL_BODY) {
      res.end(body);
      finish(ex);
      return;
    }
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const start = res.getWriteOffset();
    const [ok, done] = res.tryEnd(bytes, bytes.byteLength);
    if (done) return finish(ex);
    // the rest goes out after uWS's handler returned: a client leaving meanwhile must be seen
    if (!ex.watched) watchAbort(res, ex);
    if (!ok) {
      // the kernel took part of it: continue from the written offset when the socket drains
      res.onWritable((offset) => {
        if (ex.aborted) return true;
        const [more, complete] = res.tryEnd(bytes.subarray(offset - start), bytes.byteLength);
        if (complete) finish(ex);
        return more;
      });
    }
  };

  /**
   * Sends `total` bytes pulled a chunk at a time: one chunk in memory, the next pulled only once
   * uWS took the previous one whole (tryEnd + onWritable, as uWS's own file streamer does).
   * `done` runs however the body ends (complete, aborted, failed).
   */
  const sendChunks = (
    res: HttpResponse,
    ex: Exchange,
    total: number,
    next: (sent: number) => Promise<Uint8Array | null>,
    done: () => void,
    what: string,
  ) => {
    const writeChunk = (chunk: Uint8Array) =>
      new Promise<boolean>((resolve) => {
        if (ex.aborted) return resolve(false);
        let base = 0;
        let result: [boolean, boolean] = [false, false];
        res.cork(() => {
          base = res.getWriteOffset();
          result = res.tryEnd(chunk, total);
        });
        if (result[0] || result[1]) return resolve(true);
        ex.onAbort = () => resolve(false);
        res.onWritable((offset) => {
          if (ex.aborted) return true;
          const [ok, complete] = res.tryEnd(chunk.subarray(offset - base), total);
          if (ok || complete) {
            ex.onAbort = undefined;
            resolve(true);
          }
          return ok;
        });
      });
    const pump = async () => {
      let sent = 0;
      if (total === 0) {
        res.cork(() => res.end());
        return;
      }
      while (sent < total && !ex.aborted) {
        const chunk = await next(sent);
        if (chunk === null || sent + chunk.byteLength > total)
          throw new Error(`${what} body is not its Content-Length (${total} bytes)`);
        if (!(await writeChunk(chunk))) return;
        sent += chunk.byteLength;
      }
    };
    pump()
      .catch((err: unknown) => {
        log.error({ err }, `${what} failed`);
        // the headers promised Content-Length bytes: only closing the connection tells the client
        if (!ex.aborted) res.close();
      })
      .finally(() => {
        finish(ex);
        done();
      });
  };

  /** A byte range of an open file, closed however the download ends. */
  const sendFile = (res: HttpResponse, ex: Exchange, file: FileBody) => {
    sendChunks(
      res,
      ex,
      file.length,
      async (sent) => {
        const size = Math.min(FILE_CHUNK, file.length - sent);
        // a fresh buffer per chunk: uWS may still hold the previous one until the socket drains
        const chunk = Buffer.allocUnsafe(size);
        const { bytesRead } = await file.handle.read(chunk, 0, size, file.start + sent);
        if (bytesRead !== size) throw new Error(`file ended ${file.length - sent - bytesRead} bytes early`);
        return chunk;
      },
      () => void file.handle.close().catch(() => undefined),
      'file download',
    );
  };

  /** A body produced elsewhere (a forwarded answer), cancelled unless read to its end. */
  const sendPiped = (res: HttpResponse, ex: Exchange, body: PipedBody) => {
    let ended = false;
    sendChunks(
      res,
      ex,
      body.length,
      async () => {
        const chunk = await body.next();
        if (chunk === null) ended = true;
        return chunk;
      },
      () => {
        if (!ended) body.cancel();
      },
      'forwarded answer',
    );
  };

  // a function of its own: the abort handler lives as long as the stream, and a closure created
  // in respond() would keep the whole response (headers and all) alive with it
  const startStream = (res: HttpResponse, reply: StreamReply) => {
    const sink = new SseSocketSink(res, hardLimit, (ended) => sinks.delete(ended), options.sendBudget);
    sinks.add(sink);
    res.onAborted(() => sink.aborted());
    res.write(':\n\n'); // flushes the headers so the client sees the stream open
    try {
      reply.start(sink);
    } catch (err) {
      log.error({ err }, 'stream start failed');
      sink.close('abort');
    }
  };

  /**
   * `corked`: called from inside uWS's request handler, where uWS has corked the response
   * already; an answer given later is written in a cork of its own.
   */
  const respond = (res: HttpResponse, ex: Exchange, response: ApiResponse, corked: boolean) => {
    if (ex.aborted) {
      // the stream will never start: free what was reserved for it
      response.stream?.abandon?.();
      void response.file?.handle.close().catch(() => undefined);
      response.piped?.cancel();
      return finish(ex);
    }
    if (corked) write(res, ex, response);
    else res.cork(() => write(res, ex, response));
  };

  const write = (res: HttpResponse, ex: Exchange, response: ApiResponse) => {
    writeHead(res, response.status, response.headers, response.run);
    if (response.stream) {
      finish(ex);
      startStream(res, response.stream);
    } else if (response.status === 204 || response.status === 304) {
      // no body and no Content-Length (RFC 9110 forbids it on 204)
      res.endWithoutBody();
      finish(ex);
    } else if (response.file) {
      if (response.omitBody) {
        res.writeHeader('Content-Length', String(response.file.length));
        res.endWithoutBody();
        finish(ex);
        void response.file.handle.close().catch(() => undefined);
      } else {
        sendFile(res, ex, response.file);
      }
    } else if (response.piped) {
      if (response.omitBody) {
        res.writeHeader('Content-Length', String(response.piped.length));
        res.endWithoutBody();
        finish(ex);
        response.piped.cancel();
      } else {
        sendPiped(res, ex, response.piped);
      }
    } else if (response.omitBody) {
      // HEAD: endWithoutBody(length) leaves the connection waiting for that many bytes and it
      // never serves another request (uWS 20.30); writing the header ourselves does not
      res.writeHeader(
        'Content-Length',
        String(typeof response.body === 'string' ? Buffer.byteLength(response.body) : response.body.byteLength),
      );
      res.endWithoutBody();
      finish(ex);
    } else {
      sendBody(res, ex, response.body);
    }
  };

  const unavailable = (res: HttpResponse, ex: Exchange) => {
    const problem = renderProblem(
      new ApiError('unavailable', 'The server is shutting down; retry shortly.'),
      'req_shutdown',
      '/',
    );
    res.cork(() => {
      writeHead(res, 503, [...baseHeaders('req_shutdown', null), ...problem.headers, ['Retry-After', '1']]);
      res.end(problem.body, true);
    });
    finish(ex);
  };

  /** The socket layer's own refusals (http/http-edge.ts): problem+json, then the connection closes. */
  const refuse = (res: HttpResponse, ex: Exchange, err: ApiError, path: string) => {
    const requestId = 'req_edge';
    const problem = renderProblem(err, requestId, path.length > 512 ? `${path.slice(0, 512)}…` : path);
    res.cork(() => {
      writeHead(res, problem.status, [...baseHeaders(requestId, null), ...problem.headers]);
      // closeConnection: uWS adds `Connection: close` and closes once the answer is out
      res.end(problem.body, true);
    });
    finish(ex);
  };

  const internalError = (err: unknown): ApiResponse => {
    // the request chain renders its own errors; reaching here is a bug in it
    log.error({ err, request_id: 'req_internal' }, 'handler rejected');
    const problem = renderProblem(new ApiError('internal', 'Internal error.'), 'req_internal', '/');
    return { status: 500, headers: [...baseHeaders('req_internal', null), ...problem.headers], body: problem.body };
  };

  // one function for every request: closures created per request cost an allocation each. An
  // answer the application has at once (a cached body) is written before uWS's handler returns.
  /** `inHandler`: called from uWS's request handler itself (corked), not from a body's onData */
  const dispatch = (res: HttpResponse, ex: Exchange, request: ApiRequest, inHandler: boolean) => {
    let answer: ApiResponse | Promise<ApiResponse>;
    try {
      answer = options.handler.handleNow ? options.handler.handleNow(request) : options.handler.handle(request);
    } catch (err) {
      answer = internalError(err);
    }
    if (answer instanceof Promise) {
      // answered later: uWS must be told, and a client gone meanwhile must not be written to
      if (!ex.watched) watchAbort(res, ex);
      answer.then(
        (response) => respond(res, ex, response, false),
        (err: unknown) => respond(res, ex, internalError(err), false),
      );
    } else {
      respond(res, ex, answer, inHandler);
    }
  };

  const watchAbort = (res: HttpResponse, ex: Exchange) => {
    ex.watched = true;
    res.onAborted(() => {
      ex.aborted = true;
      finish(ex);
      ex.onAbort?.();
    });
  };

  app.any('/*', (res, req) => {
    const ex: Exchange = { aborted: false, finished: false, watched: false };
    inFlight++;
    // everything answered before this handler returns needs no abort handler (uWS asks for one
    // only for answers given later): a body, or an answer that waits, registers it
    if (closing) return unavailable(res, ex);
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    let headerBytes = 0;
    let hostRepeated = false;
    req.forEach((name, value) => {
      headerBytes += name.length + value.length + 4;
      if (headers[name] === undefined) {
        headers[name] = value;
      } else {
        if (name === 'host') hostRepeated = true;
        headers[name] = `${headers[name]}, ${value}`;
      }
    });
    const request: ApiRequest = {
      method: req.getCaseSensitiveMethod(),
      path: req.getUrl(),
      query: req.getQuery() ?? '',
      headers,
    };
    // what uWS passes although HTTP says to refuse it, and this server's size limits
    const refusal = checkRequestHead({
      targetBytes: request.path.length + (request.query ? request.query.length + 1 : 0),
      headerBytes,
      headers,
      hostRepeated,
    });
    if (refusal) return refuse(res, ex, refusal, request.path);
    const hasBody =
      BODY_METHODS.has(request.method.toUpperCase()) &&
      (Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined);
    if (!hasBody) return dispatch(res, ex, request, true);
    watchAbort(res, ex);
    const chunks: Buffer[] = [];
    let size = 0;
    let timedOut = false;
    // a body that stops arriving gets its 408 before uWS's idle timeout drops it without a word
    const idle = setTimeout(() => {
      timedOut = true;
      ex.onAbort = undefined;
      if (!ex.aborted && !ex.finished) refuse(res, ex, bodyTimeout(), request.path);
    }, BODY_IDLE_TIMEOUT_MS);
    ex.onAbort = () => clearTimeout(idle);
    res.onData((chunk, isLast) => {
      if (timedOut) return;
      idle.refresh();
      // keep one byte past the limit so the request chain can tell the body was too large
      if (size <= maxBody) {
        const part = Buffer.from(chunk.slice(0, maxBody + 1 - size));
        chunks.push(part);
        size += part.byteLength;
      }
      if (isLast) {
        clearTimeout(idle);
        ex.onAbort = undefined;
        request.body = Buffer.concat(chunks);
        dispatch(res, ex, request, false);
      }
    });
  });

  return new Promise((resolve, reject) => {
    const host = options.host ?? '127.0.0.1';
    const wanted = options.port ?? 0;
    if (typeof EXCLUSIVE_PORT !== 'number')
      throw new Error('uWebSockets.js does not export LIBUS_LISTEN_EXCLUSIVE_PORT');
    // exclusive: by default uWS sets SO_REUSEPORT, and then a second server on the same port
    // starts without a word and the kernel splits the connections between the two
    (app.listen as unknown as ListenWithOptions).call(app, host, wanted, EXCLUSIVE_PORT, (listenSocket) => {
      if (!listenSocket) {
        options.sendBudget?.stop();
        (app as unknown as { close(): void }).close();
        whyListenFails(host, wanted).then((code) => reject(new ListenError(host, wanted, code)), reject);
        return;
      }
      const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
      let closed: Promise<void> | null = null;
      resolve({
        host,
        port,
        get inFlight() {
          return inFlight;
        },
        get openStreams() {
          return sinks.size;
        },
        close() {
          closed ??= (async () => {
            closing = true;
            options.sendBudget?.stop();
            uWS.us_listen_socket_close(listenSocket);
            for (const sink of [...sinks]) sink.close('end');
            if (inFlight > 0) {
              await new Promise<void>((done) => {
                const timer = setTimeout(done, options.shutdownTimeoutMs ?? 10_000);
                drained = () => {
                  clearTimeout(timer);
                  done();
                };
              });
            }
            await options.handler.close();
            // idle keep-alive connections would otherwise hold the process open
            (app as unknown as { close(): void }).close();
          })();
          return closed;
        },
      });
    });
  });
}

/** Closes on the first SIGTERM or SIGINT; a second signal exits at once. */
export function closeOnSignals(
  close: () => Promise<void>,
  exit: (code: number) => void = process.exit,
  log: Logger = defaultLogger(),
): () => void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return exit(130);
    stopping = true;
    log.info({ signal }, 'finishing in-flight requests, then exiting');
    close().then(
      () => exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
  return () => {
    process.off('SIGTERM', handler);
    process.off('SIGINT', handler);
  };
}
