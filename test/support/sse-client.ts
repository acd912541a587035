// A minimal event-stream reader over fetch for tests that need the response status and headers
// (EventSource hides them): parses blocks as the WHATWG algorithm does for id/event/data/retry.
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

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
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let retry: number | null = null;
  let text = '';
  let ended: Promise<void> = Promise.resolve();
  const isStream = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  if (!isStream) {
    text = await res.text();
  } else {
    ended = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let id: string | undefined;
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('id: ')) id = line.slice(4);
              else if (line.startsWith('event: ')) event = line.slice(7);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
              else if (line.startsWith('retry: ')) retry = Number(line.slice(7));
            }
            if (data.length) events.push({ id, event, data: data.join('\n') });
          }
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
      return retry;
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
