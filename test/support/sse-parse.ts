import { createParser, type EventSourceParser } from 'eventsource-parser';

// Server-Sent Events as a browser reads them: eventsource-parser implements the WHATWG
// event-stream algorithm (line ends, BOM, fields without a space, multi-line data), so tests
// read our frames the way clients do instead of the way we write them.

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseParts {
  readonly events: SseEvent[];
  /** every comment line received (`ping`, `revoked`, ``), without its colon and leading space */
  readonly comments: string[];
  /** the last `retry:` value, if any */
  retry: number | null;
}

/** A parser that appends what each fed chunk completes to `parts`. */
export function sseParser(parts: SseParts): EventSourceParser {
  return createParser({
    onEvent: (message) => parts.events.push({ id: message.id, event: message.event ?? 'message', data: message.data }),
    onComment: (comment) => parts.comments.push(comment.trim()),
    onRetry: (retry) => {
      parts.retry = retry;
    },
  });
}

/** Every event, comment and retry of a whole stream's text. */
export function parseSseText(text: string): SseParts {
  const parts: SseParts = { events: [], comments: [], retry: null };
  const parser = sseParser(parts);
  parser.feed(text);
  return parts;
}
