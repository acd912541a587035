import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';

// What goes into the binary besides the bundle: the files the bundled sources name with
// assetPath('…') (a folder stands for every file under it), and the native addons with the
// shared libraries they link.

const ASSET_CALL = /\bassetPath\(\s*([^)]*?)\s*\)/g;
const LITERAL = /^(['"])([^'"\\]+)\1$/;

export interface AssetScan {
  /** literal arguments, repository-relative */
  paths: string[];
  /** calls whose argument is not a string literal: the build cannot know what to embed */
  problems: string[];
}

/** Finds assetPath('…') in the project sources the bundle contains (not in node_modules). */
export function scanAssetCalls(repoRoot: string, sources: readonly string[]): AssetScan {
  const paths = new Set<string>();
  const problems: string[] = [];
  for (const source of sources) {
    if (source.split(/[\\/]/).includes('node_modules') || source === join('core', 'assets.ts')) continue;
    const text = readFileSync(join(repoRoot, source), 'utf8');
    for (const match of text.matchAll(ASSET_CALL)) {
      const arg = match[1] ?? '';
      const literal = LITERAL.exec(arg);
      if (literal) paths.add(literal[2]!);
      else problems.push(`${source}: assetPath(${arg}) must name its file with a string literal`);
    }
  }
  return { paths: [...paths].sort(), problems };
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Repository-relative files (forward slashes) for the asset paths; folders are expanded. */
export function expandAssets(repoRoot: string, paths: readonly string[]): string[] {
  const files = new Set<string>();
  for (const path of paths) {
    const absolute = join(repoRoot, path);
    if (!existsSync(absolute)) throw new Error(`assetPath('${path}') names a file that does not exist`);
    const found = statSync(absolute).isDirectory() ? filesUnder(absolute) : [absolute];
    for (const file of found) files.add(relative(repoRoot, file).split(sep).join('/'));
  }
  return [...files].sort();
}

export interface NativeFile {
  /** file name inside the extracted native folder */
  name: string;
  source: string;
}

export interface Natives {
  /** the uWebSockets.js addon its own loader would pick for this Node */
  uws: NativeFile;
  /** duckdb.node */
  duckdb: NativeFile;
  /** every file the addons need, addons included */
  files: NativeFile[];
}

const SHARED_LIBRARY = /\.(node|so(\.\d+)*|dylib|dll)$/;

/**
 * Takes the addons for the platform and Node ABI of the Node that runs the build, which is also
 * the Node the binary is made from. The file names mirror the packages' own loaders:
 * uWebSockets.js `binaries/uws_<platform>_<arch>_<abi>.node`, DuckDB
 * `@duckdb/node-bindings-<platform>-<arch>/duckdb.node` with libduckdb beside it.
 */
export function findNatives(repoRoot: string): Natives {
  const require = createRequire(join(repoRoot, 'package.json'));
  const uwsName = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const uwsSource = join(dirname(require.resolve('uWebSockets.js')), '..', 'binaries', uwsName);
  if (!existsSync(uwsSource)) throw new Error(`uWebSockets.js has no ${uwsName} for this Node`);

  const bindingsPackage = `@duckdb/node-bindings-${process.platform}-${process.arch}`;
  let duckdbDir: string;
  try {
    duckdbDir = dirname(require.resolve(`${bindingsPackage}/package.json`));
  } catch {
    throw new Error(`${bindingsPackage} is not installed; run npm ci on the platform you build for`);
  }
  const duckdbFiles = readdirSync(duckdbDir)
    .filter((f) => SHARED_LIBRARY.test(f))
    .sort();
  if (!duckdbFiles.includes('duckdb.node')) throw new Error(`${bindingsPackage} has no duckdb.node`);

  const uws = { name: uwsName, source: uwsSource };
  const files = [uws, ...duckdbFiles.map((name) => ({ name, source: join(duckdbDir, name) }))];
  return { uws, duckdb: files.find((f) => f.name === 'duckdb.node')!, files };
}
