// Concepts that have one home: a second definition, written again beside the code that needs it,
// fails here with the file and line and the module to use instead. Production code only: tests
// may build fixtures in whatever form reads best.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { DEFAULT_CONFIG, FEED_DEFAULTS, SCHEDULE_DEFAULTS } from '../core/config.ts';
import { PRODUCTION_FOLDERS } from './support/layers.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function walk(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = posix.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : walk(path);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = PRODUCTION_FOLDERS.flatMap(walk).map((path) => ({
  path,
  lines: readFileSync(join(ROOT, path), 'utf8').split('\n'),
}));

/** A comment line: what it says is prose, not a definition. */
const isComment = (line: string) => /^\s*(\/\/|\*|\/\*)/.test(line);

/** `file:line` of every code line matching `pattern` outside the files of `home`. */
function elsewhere(pattern: RegExp, home: readonly string[]): string[] {
  const found: string[] = [];
  for (const { path, lines } of files) {
    if (home.includes(path)) continue;
    lines.forEach((line, i) => {
      if (!isComment(line) && pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

interface Concept {
  what: string;
  pattern: RegExp;
  home: readonly string[];
  use: string;
}

const CONCEPTS: Concept[] = [
  {
    what: 'epoch ms → TIMESTAMPTZ in SQL',
    pattern: /\b(to_timestamp|make_timestamptz)\s*\(/,
    home: ['store/sql.ts'],
    use: 'tsParam / timestamptzFromMs (store/sql.ts): exact integer microseconds',
  },
  {
    what: 'epoch ms → TIMESTAMPTZ value',
    pattern: /\btimestampTZValue\s*\(|new DuckDBTimestampTZValue\s*\(/,
    home: ['store/sql.ts'],
    use: 'timestamptzValue (store/sql.ts)',
  },
  {
    what: 'an instant → ISO 8601 text',
    pattern: /new Date\([^)]+\)\.toISOString\(\)/,
    home: ['core/dates.ts'],
    use: 'iso, isoRequired, instantText (core/dates.ts)',
  },
  {
    what: 'an instant → its UTC date',
    pattern: /\.toISOString\(\)\.slice\(0, ?10\)/,
    home: ['core/dates.ts'],
    use: 'utcDate (core/dates.ts)',
  },
  {
    what: 'a cron job',
    pattern: /\bcron\.(schedule|createTask)\s*\(/,
    home: ['core/cron-job.ts'],
    use: 'startCronJob (core/cron-job.ts): validated, never overlapping, failures logged',
  },
  {
    what: 'a cron expression check',
    pattern: /\bcron\.validate\s*\(/,
    home: ['core/cron-job.ts', 'core/config.ts'],
    use: 'assertCronExpression (core/cron-job.ts)',
  },
  {
    what: 'a CSP hash of an inline script or style',
    pattern: /sha256-|createHash\('sha256'\)[^;]*digest\('base64'\)/,
    home: ['http/headers.ts'],
    use: 'cspHash (http/headers.ts)',
  },
  {
    what: 'command-line parsing',
    pattern: /\bparseArgs\s*\(|\[\+\+i\]|(===|startsWith\()\s*'--[a-z]/,
    // cli/main.ts reads the command name before a command's options exist; fixtures/generate.ts is its own program
    home: ['cli/command.ts', 'cli/main.ts', 'fixtures/generate.ts'],
    use: "the Command's options (cli/command.ts parses them once; operations read CommandRequest.values)",
  },
  {
    what: 'an option value helper',
    pattern: /function oneOf\b|const oneOf\b|\(typeof value === 'string' \? value : undefined\)/,
    home: ['admin/operations/options.ts'],
    use: 'oneOf, text (admin/operations/options.ts)',
  },
];

for (const concept of CONCEPTS) {
  t.test(`${concept.what}: only in ${concept.home.join(', ')}`, async (t) => {
    const found = elsewhere(concept.pattern, concept.home);
    t.strictSame(found, [], `use ${concept.use}`);
  });
}

// Defaults a reader would recognise (paths, clock times, cron expressions, key prefixes) are
// written in core/config.ts only; code without a config reads DEFAULT_CONFIG and its siblings.
t.test('config defaults are written once, in core/config.ts', async (t) => {
  const strings: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') strings.push(value);
    else if (value && typeof value === 'object') for (const child of Object.values(value)) collect(child);
  };
  for (const defaults of [DEFAULT_CONFIG, FEED_DEFAULTS, SCHEDULE_DEFAULTS]) collect(defaults);
  // loopback is an address every listener and client names, not a default of ours
  const distinctive = [...new Set(strings)].filter((s) => /[/:*]/.test(s) && s !== '127.0.0.1');
  t.ok(distinctive.includes('04:00') && distinctive.includes(DEFAULT_CONFIG.db_path), 'the check reads the defaults');
  for (const value of distinctive) {
    const literal = new RegExp(`['"\`]${value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"\`]`);
    const found = elsewhere(literal, ['core/config.ts']).filter((line) => !/\bexample:/.test(line));
    t.strictSame(found, [], `${JSON.stringify(value)}: read it from DEFAULT_CONFIG (core/config.ts)`);
  }
  t.strictSame(
    elsewhere(/\?\?\s*\d[\d_]*\s*\*\s*1024\s*\*\s*1024/, ['core/config.ts']),
    [],
    'no byte-size fallback beside an option: the config gives it',
  );
});

t.test('the checks find what they look for', async (t) => {
  // each pattern matches its home, so a renamed helper cannot leave a check that finds nothing
  for (const concept of CONCEPTS) {
    const homes = files.filter((f) => concept.home.includes(f.path));
    t.ok(
      homes.some((f) => f.lines.some((line) => !isComment(line) && concept.pattern.test(line))),
      `${concept.what}: found in ${concept.home.join(' or ')}`,
    );
  }
});
