// Server-sent events framing (WHATWG HTML, "Server-sent events"), as one pure function.
//
// A CR or LF inside `id` or `event` would end the field early and let the rest of the value be
// read as another field (or a whole injected event), so those are refused rather than escaped:
// there is no escape syntax in the format. Data may hold any text; each of its lines becomes one
// `data:` line and the client joins them back with LF.

export interface SseFields {
  /** becomes the client's Last-Event-ID; no CR, LF or NUL */
  id?: string | number;
  /** event name dispatched by EventSource (default "message"); no CR or LF */
  event?: string;
  data?: string;
  /** reconnection delay the client should use, in ms */
  retry?: number;
  /** a comment line (`: …`), ignored by clients; used for keep-alive pings */
  comment?: string;
}

const LINE_BREAK = /\r\n|\r|\n/;
const FORBIDDEN_IN_ID = /[\r\n\0]/;
const FORBIDDEN_IN_EVENT = /[\r\n]/;

export class SseFrameError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'SseFrameError';
  }
}

/** Encodes one event block, ending with the blank line that dispatches it. */
export function frame(fields: SseFields): string {
  let out = '';
  if (fields.comment !== undefined) {
    for (const line of fields.comment.split(LINE_BREAK)) out += line === '' ? ':\n' : `: ${line}\n`;
  }
  if (fields.id !== undefined) {
    const id = String(fields.id);
    // a NUL makes browsers ignore the id silently, which would break resume without a trace
    if (FORBIDDEN_IN_ID.test(id)) throw new SseFrameError('SSE id must not contain CR, LF or NUL');
    out += `id: ${id}\n`;
  }
  if (fields.event !== undefined) {
    if (FORBIDDEN_IN_EVENT.test(fields.event)) throw new SseFrameError('SSE event name must not contain CR or LF');
    if (fields.event === '') throw new SseFrameError('SSE event name must not be empty');
    out += `event: ${fields.event}\n`;
  }
  if (fields.retry !== undefined) {
    if (!Number.isSafeInteger(fields.retry) || fields.retry < 0) {
      throw new SseFrameError('SSE retry must be a non-negative integer number of milliseconds');
    }
    out += `retry: ${fields.retry}\n`;
  }
  if (fields.data !== undefined) {
    // the client strips exactly one space after the colon, so a line starting with a space survives
    for (const line of fields.data.split(LINE_BREAK)) out += `data: ${line}\n`;
  }
  return `${out}\n`;
}

/** The same block as bytes, ready to be written to many sockets without re-encoding. */
export function frameBytes(fields: SseFields): Buffer {
  return Buffer.from(frame(fields), 'utf8');
}
