// The README is the front page and the guides under docs/guides/ hold the rest: every relative
// link in them must lead somewhere (a file or folder of the checkout, and a heading when it names
// one in a Markdown file), every guide must be linked from the README, and the README stays short.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const GUIDES = 'docs/guides';
const README_MAX_LINES = 250;

const guides = readdirSync(join(ROOT, GUIDES))
  .filter((f) => f.endsWith('.md'))
  .map((f) => posix.join(GUIDES, f))
  .sort();
const documents = ['README.md', ...guides];

/** Markdown text without its fenced code blocks, whose brackets are code, not links. */
function prose(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
}

/** `[text](target)` links, inline code left out. */
function links(text: string): string[] {
  const plain = prose(text).replace(/`[^`\n]*`/g, (code) => (code.includes('](') ? '' : code));
  return [...plain.matchAll(/\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(readFileSync(join(ROOT, file), 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

t.test('the check reads the documents', async (t) => {
  t.ok(guides.length >= 10, `${guides.length} guides`);
  t.ok(links(readFileSync(join(ROOT, 'README.md'), 'utf8')).length >= guides.length, 'the README has links');
  t.same(links('see [a](b.md) and `[c](d)` and\n```\n[e](f)\n```\n'), ['b.md'], 'links in code are not links');
  t.equal(
    slug('Old and future snapshots, idempotent history, replay'),
    'old-and-future-snapshots-idempotent-history-replay',
  );
});

t.test('every relative link resolves', async (t) => {
  for (const doc of documents) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    for (const link of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? doc : posix.normalize(posix.join(posix.dirname(doc), path));
      const where = `${doc}: ${link}`;
      if (target.startsWith('..') || !existsSync(join(ROOT, target))) {
        t.fail(`${where}: ${target} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!target.endsWith('.md') || statSync(join(ROOT, target)).isDirectory()) {
        t.fail(`${where}: an anchor into a file that is not Markdown`);
        continue;
      }
      t.ok(anchors(target).has(anchor), `${where}: a heading #${anchor} in ${target}`);
    }
  }
});

t.test('the README links every guide and stays a front page', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const linked = new Set(
    links(readme)
      .map((l) => l.split('#')[0]!)
      .filter((l) => l !== '')
      .map((l) => posix.normalize(l)),
  );
  for (const guide of guides) t.ok(linked.has(guide), `README links ${guide}`);
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  t.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines (at most ${README_MAX_LINES})`);
});

t.test('no document points at a README section that moved to a guide', async (t) => {
  const sources = [...documents, ...walkMarkdown('store'), ...walkMarkdown('exports'), ...walkMarkdown('bench')];
  for (const doc of sources) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    for (const m of text.matchAll(
      new RegExp(
        String.raw`README(?:\.md)?[,:]? ["(]?(Operations|Deploy|Benchmarks|More than one machine|The API|Architec` +
          String.raw`ture|For analysts|Configuration reference|Feeds that break the rules)\b`,
        'g',
      ),
    ))
      t.fail(`${doc}: "${m[0]}" names a README section that is now a guide under ${GUIDES}/`);
  }
  t.pass('checked');
});

function walkMarkdown(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walkMarkdown(path);
    return e.name.endsWith('.md') ? [relative(ROOT, join(ROOT, path))] : [];
  });
}
