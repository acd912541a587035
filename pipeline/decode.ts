// Bytes → FeedMessage. Bodies that are not a FeedMessage are classified, never thrown.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { assetPath } from '../core/assets.ts';
import type { RejectReason } from '../core/types.ts';
import { has, type FeedMessageMsg } from './gtfs-rt-types.ts';

const PROTO_PATH = assetPath('pipeline/gtfs-realtime.proto');
// agency extensions, parsed into the same root so their fields decode instead of being skipped
const EXTENSION_PATHS = [assetPath('pipeline/nyct-subway.proto')];

export type DecodeRejectReason = Extract<RejectReason, 'base64_body' | 'not_protobuf' | 'truncated_body'>;

export type DecodeResult =
  | { ok: true; message: FeedMessageMsg }
  | { ok: false; reason: DecodeRejectReason; error: string };

let feedMessageType: protobuf.Type | undefined;

/**
 * Parsed once. `required` is read as `optional`: the reference marks e.g. entity ids and
 * latitudes required, and protobufjs would then fail the whole feed for one bad entity. The
 * normalizers check presence themselves and reject just that row with a counted reason.
 */
function feedMessage(): protobuf.Type {
  if (feedMessageType) return feedMessageType;
  const root = new protobuf.Root();
  for (const path of [PROTO_PATH, ...EXTENSION_PATHS]) {
    protobuf.parse(readFileSync(path, 'utf8').replace(/^(\s*)required\b/gm, '$1optional'), root, { keepCase: true });
  }
  root.resolveAll();
  feedMessageType = root.lookupType('transit_realtime.FeedMessage');
  return feedMessageType;
}

/** The reflection type, for encoders in tests, the demo simulator and benches. */
export function feedMessageCodec(): protobuf.Type {
  return feedMessage();
}

/**
 * The bytes as a plain Uint8Array: given a Node Buffer (what fetch and readFile deliver),
 * protobufjs reads each string through Buffer#utf8Slice, a native call per string; given a plain
 * view of the same memory, through its own reader (an ASCII fast path, TextDecoder past it, with
 * the same replacement of invalid UTF-8). A 5,000-vehicle feed carries ~30,000 short strings:
 * decoding took ~40 % less (bench/ingest.ts). No copy is made.
 */
function plainBytes(bytes: Uint8Array): Uint8Array {
  return Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
}

export function decodeFeedMessage(bytes: Uint8Array): DecodeResult {
  const type = feedMessage();
  let message: FeedMessageMsg;
  try {
    message = type.decode(plainBytes(bytes)) as unknown as FeedMessageMsg;
  } catch (err) {
    return classifyFailure(bytes, (err as Error).message);
  }
  if (!has(message, 'header')) {
    // a text or empty body can decode as an empty message; without a header it is not a feed
    if (looksLikeBase64(bytes)) return classifyFailure(bytes, 'no FeedHeader');
    return { ok: false, reason: 'not_protobuf', error: bytes.length ? 'no FeedHeader in body' : 'empty body' };
  }
  return { ok: true, message };
}

function classifyFailure(bytes: Uint8Array, error: string): DecodeResult {
  if (looksLikeBase64(bytes)) {
    const inner = Buffer.from(Buffer.from(bytes).toString('latin1'), 'base64');
    try {
      const decoded = feedMessage().decode(inner) as unknown as FeedMessageMsg;
      if (has(decoded, 'header')) {
        return { ok: false, reason: 'base64_body', error: 'body is base64 text of a FeedMessage, not binary protobuf' };
      }
    } catch {
      // base64 alphabet but not a feed inside: plain garbage
    }
  }
  if (scanTopLevel(bytes) === 'truncated') {
    return { ok: false, reason: 'truncated_body', error: `body ends inside a field (${bytes.length} bytes): ${error}` };
  }
  return { ok: false, reason: 'not_protobuf', error };
}

const BASE64_BYTE = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_\r\n\t ') {
  BASE64_BYTE[c.charCodeAt(0)] = 1;
}

function looksLikeBase64(bytes: Uint8Array): boolean {
  if (bytes.length < 8) return false;
  for (let i = 0; i < bytes.length; i++) if (!BASE64_BYTE[bytes[i]!]) return false;
  return true;
}

/**
 * Walks the FeedMessage's top-level fields (header = 1, entity = 2, extensions) by their wire
 * lengths. A body whose fields are well formed until one runs past the end was cut short; one
 * with a field a FeedMessage cannot have is something else.
 */
function scanTopLevel(bytes: Uint8Array): 'complete' | 'truncated' | 'invalid' {
  let pos = 0;
  const readVarint = (): number | null => {
    let result = 0;
    let shift = 0;
    while (pos < bytes.length) {
      const b = bytes[pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
      shift += 7;
      if (shift > 63) return Number.NaN;
    }
    return null;
  };
  if (bytes.length === 0) return 'invalid';
  while (pos < bytes.length) {
    const tag = readVarint();
    if (tag === null) return 'truncated';
    if (Number.isNaN(tag)) return 'invalid';
    const field = Math.floor(tag / 8);
    const wire = tag % 8;
    const extension = (field >= 1000 && field <= 1999) || (field >= 9000 && field <= 9999);
    if (!extension && !((field === 1 || field === 2) && wire === 2)) return 'invalid';
    if (wire === 0) {
      if (readVarint() === null) return 'truncated';
    } else if (wire === 1 || wire === 5) {
      pos += wire === 1 ? 8 : 4;
      if (pos > bytes.length) return 'truncated';
    } else if (wire === 2) {
      const length = readVarint();
      if (length === null) return 'truncated';
      if (Number.isNaN(length)) return 'invalid';
      if (pos + length > bytes.length) return 'truncated';
      pos += length;
    } else {
      return 'invalid';
    }
  }
  return 'complete';
}

/**
 * The header timestamp (raw POSIX value, before any milliseconds check) read straight off the wire
 * without decoding entities: replay orders thousands of archived snapshots by it. null without a
 * timestamp; undefined when the bytes are not a FeedMessage with a readable header.
 */
export function readHeaderTimestamp(bytes: Uint8Array): number | null | undefined {
  try {
    const reader = protobuf.Reader.create(bytes);
    while (reader.pos < reader.len) {
      const tag = reader.uint32();
      if (tag >>> 3 !== 1 || (tag & 7) !== 2) {
        reader.skipType(tag & 7);
        continue;
      }
      const header = protobuf.Reader.create(reader.bytes());
      let timestamp: number | null = null;
      while (header.pos < header.len) {
        const t = header.uint32();
        if (t >>> 3 === 3 && (t & 7) === 0) timestamp = Number(header.uint64().toString());
        else header.skipType(t & 7);
      }
      return timestamp !== null && timestamp > 0 ? timestamp : null;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
