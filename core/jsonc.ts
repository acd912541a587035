// JSON with comments, as config files are written (`transit-api init` explains each key in a
// comment). Comments become spaces and newlines stay, so JSON.parse reports the line and column
// of a mistake in the file as the operator sees it. Nothing else is relaxed: no trailing commas.

/** `text` with every `// …` and `/* … *\/` outside a string replaced by blanks. */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  let copied = 0;
  const blank = (from: number, to: number) => {
    out += text.slice(copied, from) + text.slice(from, to).replace(/[^\r\n]/g, ' ');
    copied = to;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // a string: to its closing quote, stepping over escapes (a `//` inside a URL stays)
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      const to = end === -1 ? text.length : end;
      blank(i, to);
      i = to;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      // an unclosed comment is left as is: JSON.parse then points at it
      if (end === -1) break;
      blank(i, end + 2);
      i = end + 2;
    } else {
      i++;
    }
  }
  return out + text.slice(copied);
}
