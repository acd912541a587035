// A response's header section in few uWS writeHeader calls. uWS writes `name: value\r\n` per
// call, and each call crosses into C++ and converts its two strings to UTF-8: about 0.25 µs, 17
// times on an API answer, more than the rest of the socket layer's work together. The same bytes
// go out when one header's value carries the lines of those after it, so the socket layer writes
// a response's shared run (headers.ts HeaderRun, joined once) in one call and its own headers in
// a second, joined here; a shared header (headers.ts sharedHeader) brings its line ready-made.
/** A header tuple with its `\r\nname: value` line made once (shared headers carry one). */
export type LinedHeader = readonly [string, string] & { readonly line?: string };

/** `\r\nname: value`: the line that follows another header's in a section. */
export function headerLine(name: string, value: string): string {
  return `\r\n${name}: ${value}`;
}

/**
 * The value to write under the name of `headers[from]` so that `name: value\r\n` is the section
 * of `headers` from there on (at least one), in their order.
 */
export function headerBlock(headers: readonly (readonly [string, string])[], from = 0): string {
  let block = headers[from]![1];
  for (let i = from + 1; i < headers.length; i++) {
    const header = headers[i] as LinedHeader;
    block += header.line ?? headerLine(header[0], header[1]);
  }
  return block;
}
