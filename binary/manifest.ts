// The table of contents of a single executable: written by scripts/build-binary.ts as the SEA
// asset `manifest.json`, read by binary/entry.ts at start. It lists every embedded file with the
// path it is extracted to, its size and hash, so a cache folder can be checked before reuse.

export const MANIFEST_KEY = 'manifest.json';

/** Subfolder of the extracted tree holding the native addons and the libraries they link. */
export const NATIVE_DIR = 'native';

export interface ManifestEntry {
  /** SEA asset key */
  key: string;
  /** where it lands, relative to the extracted root (forward slashes) */
  path: string;
  /** size once extracted */
  bytes: number;
  /** hex sha256 of the extracted bytes */
  sha256: string;
  /** large native libraries are stored gzipped to keep the binary small */
  encoding: 'raw' | 'gzip';
}

export interface SeaManifest {
  name: string;
  version: string;
  /** content id of all entries: names the per-version cache folder */
  id: string;
  /** `${platform}-${arch}` and Node ABI the addons were taken for */
  platform: string;
  abi: string;
  entries: ManifestEntry[];
  /** addon file names inside NATIVE_DIR, by the module they replace in the bundle */
  natives: { uws: string; duckdb: string };
}

function fail(problem: string): never {
  throw new Error(`embedded manifest is invalid: ${problem}`);
}

const SAFE_PATH = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[\w@+./-]+$/;

/** Parses and checks the manifest; paths may not leave the extraction folder. */
export function parseManifest(text: string): SeaManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    fail((err as Error).message);
  }
  const m = raw as Partial<SeaManifest>;
  for (const field of ['name', 'version', 'id', 'platform', 'abi'] as const) {
    if (typeof m[field] !== 'string' || !m[field]) fail(`${field} missing`);
  }
  if (!/^[0-9a-f]{8,64}$/.test(m.id!)) fail('id is not hex');
  if (!/^[\w.+-]+$/.test(m.version!)) fail(`version ${JSON.stringify(m.version)} is not a plain version string`);
  if (!Array.isArray(m.entries)) fail('entries missing');
  const seen = new Set<string>();
  for (const e of m.entries) {
    if (typeof e?.key !== 'string' || typeof e.path !== 'string') fail('entry without key or path');
    if (!SAFE_PATH.test(e.path)) fail(`unsafe path ${JSON.stringify(e.path)}`);
    if (seen.has(e.path)) fail(`duplicate path ${e.path}`);
    seen.add(e.path);
    if (!Number.isSafeInteger(e.bytes) || e.bytes < 0) fail(`${e.path}: bad size`);
    if (!/^[0-9a-f]{64}$/.test(e.sha256)) fail(`${e.path}: bad sha256`);
    if (e.encoding !== 'raw' && e.encoding !== 'gzip') fail(`${e.path}: unknown encoding`);
  }
  for (const name of ['uws', 'duckdb'] as const) {
    const file = m.natives?.[name];
    if (typeof file !== 'string' || !seen.has(`${NATIVE_DIR}/${file}`)) fail(`native ${name} is not among the entries`);
  }
  return m as SeaManifest;
}
