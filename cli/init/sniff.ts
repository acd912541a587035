// What a body that is not what was asked for looks like, in words: the usual wrong answers of a
// feed URL are a login or error page, a JSON rendering of the feed, the static GTFS zip, or text.

export interface BodyLooks {
  kind: 'html' | 'xml' | 'json' | 'zip' | 'text' | 'empty';
  /** "an HTML page (<!DOCTYPE html> …)" */
  what: string;
  hint?: string;
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

function isText(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 512);
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b < 0x09 || (b > 0x0d && b < 0x20 && b !== 0x1b)) return false;
  }
  return true;
}

/** The body's first characters, one line, for the operator to recognize it. */
function excerpt(text: string): string {
  const line = text.trim().replace(/\s+/g, ' ');
  return line.length > 60 ? `${line.slice(0, 60)}…` : line;
}

/** How the body looks when it is recognizably something else; null for binary of no known kind. */
export function describeBody(bytes: Uint8Array): BodyLooks | null {
  if (bytes.length === 0) return { kind: 'empty', what: 'empty' };
  if (ZIP_MAGIC.every((b, i) => bytes[i] === b)) {
    return {
      kind: 'zip',
      what: 'a ZIP archive',
      hint: 'the static GTFS goes to --gtfs, the realtime feeds to the other flags',
    };
  }
  if (!isText(bytes)) return null;
  const text = Buffer.from(bytes.subarray(0, 4096))
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  const head = text.trimStart().slice(0, 200).toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html') || /<(head|body|title)[\s>]/.test(head)) {
    return { kind: 'html', what: `an HTML page (${excerpt(text)})` };
  }
  if (head.startsWith('<')) return { kind: 'xml', what: `XML (${excerpt(text)})` };
  if (head.startsWith('{') || head.startsWith('[')) {
    return {
      kind: 'json',
      what: `JSON (${excerpt(text)})`,
      hint:
        'some agencies serve GTFS-Realtime as JSON beside the protobuf (?format=json and the like): give the ' +
        'binary protobuf URL',
    };
  }
  return { kind: 'text', what: `text (${excerpt(text)})` };
}
