// A strict parser of the Prometheus text exposition format 0.0.4, for tests: it rejects what a
// Prometheus server would reject (bad names, bad escapes, bad values, duplicate series, a TYPE
// after its samples, a family split in two) and checks the families' own rules (counters not
// negative, histogram buckets cumulative with an le label, a +Inf bucket equal to _count, _sum
// and _count present). https://prometheus.io/docs/instrumenting/exposition_formats/

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** the sample's own name, e.g. x_bucket for a histogram family x */
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

export interface MetricFamily {
  name: string;
  type: MetricType;
  help?: string;
  samples: Sample[];
}

export class ExpositionError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case; prom-client writes "Nan". */
function parseValue(text: string, line: number): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new ExpositionError(line, `not a number: ${JSON.stringify(text)}`);
  return Number(text);
}

/** `{a="1",b="x\"y"}` starting at `start` (the brace); returns the labels and the index after `}`. */
function parseLabels(text: string, start: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return { labels, end: i + 1 };
    const nameStart = i;
    while (i < text.length && /[a-zA-Z0-9_]/.test(text[i]!)) i++;
    const name = text.slice(nameStart, i);
    if (!LABEL_NAME.test(name)) throw new ExpositionError(line, `bad label name ${JSON.stringify(name)}`);
    if (name.startsWith('__')) throw new ExpositionError(line, `label names starting with __ are reserved: ${name}`);
    if (name in labels) throw new ExpositionError(line, `label ${name} given twice`);
    while (text[i] === ' ') i++;
    if (text[i] !== '=') throw new ExpositionError(line, `expected = after label ${name}`);
    i++;
    while (text[i] === ' ') i++;
    if (text[i] !== '"') throw new ExpositionError(line, `label ${name}: the value must be quoted`);
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new ExpositionError(line, `label ${name}: unterminated value`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[i + 1];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new ExpositionError(line, `label ${name}: bad escape \\${next ?? ''}`);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++;
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new ExpositionError(line, `expected , or } after label ${name}`);
  }
}

/** The family a sample belongs to: its own name, or the name without a histogram/summary suffix. */
function familyOf(name: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const family = families.get(name.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return families.get(name);
}

function seriesKey(name: string, labels: Record<string, string>, without?: string): string {
  return `${name}{${Object.keys(labels)
    .filter((k) => k !== without)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')}}`;
}

function checkHistogram(family: MetricFamily): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>();
  for (const s of family.samples) {
    const key = seriesKey(family.name, s.labels, 'le');
    let group = groups.get(key);
    if (!group) {
      group = { buckets: [] };
      groups.set(key, group);
    }
    if (s.name === `${family.name}_bucket`) {
      if (s.labels.le === undefined) throw new ExpositionError(0, `${family.name}_bucket without an le label`);
      group.buckets.push([parseValue(s.labels.le, 0), s.value]);
    } else if (s.name === `${family.name}_sum`) group.sum = s.value;
    else if (s.name === `${family.name}_count`) group.count = s.value;
    else throw new ExpositionError(0, `${s.name} is not a sample of histogram ${family.name}`);
  }
  for (const [key, group] of groups) {
    if (group.sum === undefined || group.count === undefined)
      throw new ExpositionError(0, `${key}: _sum or _count missing`);
    const sorted = [...group.buckets].sort((a, b) => a[0] - b[0]);
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY) throw new ExpositionError(0, `${key}: no le="+Inf" bucket`);
    if (inf[1] !== group.count)
      throw new ExpositionError(0, `${key}: the +Inf bucket (${inf[1]}) is not _count (${group.count})`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1])
        throw new ExpositionError(0, `${key}: buckets are not cumulative at le=${sorted[i]![0]}`);
    }
  }
}

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new ExpositionError(0, 'the exposition must end with a line feed');
  const families = new Map<string, MetricFamily>();
  const seen = new Set<string>();
  const finished = new Set<string>();
  let current: MetricFamily | null = null;
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    if (raw.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(raw);
      if (!m) return; // a plain comment
      const [, keyword, name, rest = ''] = m;
      if (!METRIC_NAME.test(name!)) throw new ExpositionError(line, `bad metric name ${JSON.stringify(name)}`);
      let family = families.get(name!);
      if (family && finished.has(name!))
        throw new ExpositionError(line, `${keyword} for ${name} after its family ended`);
      if (!family) {
        family = { name: name!, type: 'untyped', samples: [] };
        families.set(name!, family);
      }
      if (current && current !== family) finished.add(current.name);
      current = family;
      if (keyword === 'TYPE') {
        if (family.samples.length) throw new ExpositionError(line, `TYPE for ${name} after its samples`);
        if (!TYPES.has(rest.trim())) throw new ExpositionError(line, `unknown type ${JSON.stringify(rest)}`);
        family.type = rest.trim() as MetricType;
      } else {
        if (family.help !== undefined) throw new ExpositionError(line, `second HELP for ${name}`);
        if (/\\(?![\\n])/.test(rest)) throw new ExpositionError(line, `bad escape in HELP of ${name}`);
        family.help = rest.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
      }
      return;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(raw);
    if (!nameMatch) throw new ExpositionError(line, `a sample must start with a metric name: ${JSON.stringify(raw)}`);
    const name = nameMatch[0];
    let i = name.length;
    let labels: Record<string, string> = {};
    if (raw[i] === '{') ({ labels, end: i } = parseLabels(raw, i, line));
    const rest = raw.slice(i);
    const values = /^[ \t]+(\S+)(?:[ \t]+(-?\d+))?[ \t]*$/.exec(rest);
    if (!values) throw new ExpositionError(line, `expected a value after ${name}: ${JSON.stringify(rest)}`);
    const value = parseValue(values[1]!, line);
    let family = familyOf(name, families);
    if (!family) {
      family = { name, type: 'untyped', samples: [] };
      families.set(name, family);
    }
    if (finished.has(family.name)) throw new ExpositionError(line, `samples of ${family.name} are not together`);
    if (current && current !== family) finished.add(current.name);
    current = family;
    const key = seriesKey(name, labels);
    if (seen.has(key)) throw new ExpositionError(line, `duplicate series ${key}`);
    seen.add(key);
    if (family.type === 'counter' && (value < 0 || Number.isNaN(value)))
      throw new ExpositionError(line, `counter ${key} is ${value}`);
    if (family.type === 'counter' && name !== family.name)
      throw new ExpositionError(line, `${name} in counter family ${family.name}`);
    if (family.type === 'gauge' && name !== family.name)
      throw new ExpositionError(line, `${name} in gauge family ${family.name}`);
    family.samples.push({ name, labels, value, ...(values[2] ? { timestampMs: Number(values[2]) } : {}) });
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of one series, or undefined when the family or the series is absent. */
export function sampleValue(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== name) continue;
      const keys = Object.keys(labels);
      if (keys.every((k) => s.labels[k] === labels[k])) return s.value;
    }
  }
  return undefined;
}
