// `init`'s first look at the static GTFS: fetched once (a URL is downloaded to a temporary copy
// that the import then reads), refused early when it is no ZIP archive or folder, and its agency
// name read to name the schedule. Whether it holds a usable GTFS is the import's own check.
import { readdir, readFile, stat } from 'node:fs/promises';
import { posix, resolve, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchGtfs } from '../../store/gtfs-source.ts';
import { openZip, ZipError, type ZipArchive } from '../../store/zip.ts';
import { describeBody } from './sniff.ts';

export class GtfsCheckError extends Error {}

/** A URL as given; a path (or file:// URL) as an absolute path, as the config must name it. */
export function scheduleSource(arg: string): string {
  if (/^https?:\/\//i.test(arg)) return arg;
  if (/^file:\/\//i.test(arg)) return fileURLToPath(arg);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg))
    throw new GtfsCheckError(`--gtfs must be an http(s) URL, a file:// URL or a path, got ${arg}`);
  return resolve(arg);
}

export interface FetchedSchedule {
  /** the local zip or folder to import */
  path: string;
  /** agency_name of the first agency, when agency.txt has one */
  agency: string | null;
  cleanup(): Promise<void>;
}

/** Fetches (downloads a URL once) and opens the source far enough to know it is a ZIP archive or a folder. */
export async function fetchSchedule(source: string): Promise<FetchedSchedule> {
  let fetched: Awaited<ReturnType<typeof fetchGtfs>>;
  try {
    fetched = await fetchGtfs(source);
  } catch (err) {
    throw new GtfsCheckError((err as Error).message);
  }
  if (!fetched.changed) throw new Error('unreachable: an unconditional fetch answered not modified');
  try {
    const info = await stat(fetched.path);
    const agency = info.isDirectory() ? await agencyInFolder(fetched.path) : await agencyInZip(fetched.path, source);
    return { path: fetched.path, agency, cleanup: fetched.cleanup };
  } catch (err) {
    await fetched.cleanup();
    throw err;
  }
}

async function agencyInZip(path: string, source: string): Promise<string | null> {
  let zip: ZipArchive;
  try {
    zip = await openZip(path);
  } catch (err) {
    if (!(err instanceof ZipError)) throw err;
    const head = await readFile(path).then((b) => b.subarray(0, 4096));
    const looks = describeBody(head);
    throw new GtfsCheckError(
      `${source} is not a GTFS zip: ` +
        `${looks && looks.kind !== 'zip' ? `it is ${looks.what}` : 'not a ZIP archive, or a truncated one'}`,
    );
  }
  try {
    const entries = zip.entries
      .filter((e) => !e.isDirectory && posix.basename(e.name).toLowerCase() === 'agency.txt')
      .filter((e) => !e.name.split('/').some((part) => part === '__MACOSX' || part.startsWith('.')))
      .sort((a, b) => a.name.split('/').length - b.name.split('/').length);
    if (!entries[0] || entries[0].size > 1024 * 1024) return null;
    return firstAgencyName((await zip.read(entries[0])).toString('utf8'));
  } finally {
    await zip.close();
  }
}

async function agencyInFolder(root: string): Promise<string | null> {
  const candidates = [join(root, 'agency.txt')];
  for (const e of await readdir(root, { withFileTypes: true })) {
    if (e.isDirectory() && !e.name.startsWith('.')) candidates.push(join(root, e.name, 'agency.txt'));
  }
  for (const file of candidates) {
    const text = await readFile(file, 'utf8').catch(() => null);
    if (text !== null) return firstAgencyName(text);
  }
  return null;
}

/** One CSV record (RFC 4180 quoting) from the start of `text`. */
function csvRecord(text: string, from: number): { fields: string[]; next: number } {
  const fields: string[] = [];
  let i = from;
  let field = '';
  let quoted = false;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      i++;
      break;
    } else field += c;
  }
  fields.push(field);
  return { fields, next: i };
}

export function firstAgencyName(text: string): string | null {
  const body = text.replace(/^\uFEFF/, '');
  const header = csvRecord(body, 0);
  const column = header.fields.findIndex((f) => f.trim().toLowerCase() === 'agency_name');
  if (column === -1) return null;
  const name = csvRecord(body, header.next).fields[column]?.trim();
  return name ? name : null;
}

/** "Caltrain" → "caltrain", "Metro Transit (MN)" → "metro-transit-mn"; null when nothing is left. */
export function slug(name: string): string | null {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return s || null;
}
