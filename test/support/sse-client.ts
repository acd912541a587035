import { type SseEvent, type SseParts, sseParser } from './sse-parse.ts';

// An event-stream reader over fetch for tests that need the response status and headers
// (EventSource hides them); the stream is parsed by eventsource-parser (./sse-parse.ts).
export type { SseEvent };

export interface SseConnection {
  readonly status: number;
  readonly headers: Headers;
  /** the body text of a non-stream (problem) response */
  readonly text: string;
  readonly events: SseEvent[];
  /** every comment line received (`ping`, ``) */
  readonly comments: string[];
  readonly retry: number | null;
  /** resolves when the server ended the stream */
  readonly ended: Promise<void>;
  waitFor(predicate: (events: readonly SseEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const parts: SseParts = { events: [], comments: [], retry: null };
  const { events, comments } = parts;
  const waiters = new Set<() => void>();
  let text = '';
  let ended: Promise<void> = Promise.resolve();
  const isStream = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  if (!isStream) {
    text = await res.text();
  } else {
    ended = (async () => {
      const decoder = new TextDecoder();
      const parser = sseParser(parts);
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          for (const wake of [...waiters]) wake();
        }
      } catch {
        // aborted by close()
      }
      for (const wake of [...waiters]) wake();
    })();
  }
  let done = false;
  void ended.then(() => {
    done = true;
  });
  return {
    status: res.status,
    headers: res.headers,
    text,
    events,
    comments,
    get retry() {
      return parts.retry;
    },
    ended,
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (done) throw new Error(`stream ended before the condition held (${events.length} events)`);
        if (Date.now() > deadline)
          throw new Error(`condition not met within ${timeoutMs} ms (${events.length} events)`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(wake, 200);
          function wake() {
            clearTimeout(timer);
            waiters.delete(wake);
            resolve();
          }
          waiters.add(wake);
        });
      }
    },
    async close() {
      controller.abort();
      await ended;
    },
  };
}
