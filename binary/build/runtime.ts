import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleApp } from './bundle.ts';
import { expandAssets, scanAssetCalls } from './collect.ts';

// The built runtime: cli/dist-entry.ts and the app bundled into dist/transit-api.cjs (the bundle
// of the single executable, with the native packages left to node_modules), which
// bin/transit-api.js, `npm start` and `npx transit-api` run with plain node. Its assets stay in
// the checkout (core/assets.ts). Made by `npm run build` (scripts/build.ts), which `prepare` runs.

export const RUNTIME_BUNDLE = join('dist', 'transit-api.cjs');
/** What the bundle was made from (to tell a stale build) and the assets it reads, beside it. */
const INFO_FILE = join('dist', 'transit-api.build.json');

export interface BuildInfo {
  /** repository-relative project files the bundle was made from (not node_modules) */
  inputs: string[];
  /** repository-relative files the bundle reads at run time */
  assetFiles: string[];
}

export interface RuntimeBuild {
  file: string;
  bytes: number;
  /** repository-relative sources inside the bundle, node_modules included */
  inputs: string[];
  /** the files and folders the app reads through assetPath, all checked to exist */
  assets: string[];
  warnings: string[];
}

/**
 * Bundles into a private file and renames it into place, so concurrent builds (tests that each
 * make sure of a fresh build) never run or leave a half-written bundle.
 */
export async function buildRuntime(repoRoot: string): Promise<RuntimeBuild> {
  const file = join(repoRoot, RUNTIME_BUNDLE);
  mkdirSync(join(repoRoot, 'dist'), { recursive: true });
  const scratch = `${file}.${process.pid}.tmp`;
  try {
    const bundle = await bundleApp({ repoRoot, entry: 'cli/dist-entry.ts', outfile: scratch, natives: 'node_modules' });
    const scan = scanAssetCalls(repoRoot, bundle.inputs);
    if (scan.problems.length) throw new Error(scan.problems.join('\n'));
    const assetFiles = expandAssets(repoRoot, scan.paths); // throws when a named file is missing
    const own = bundle.inputs.filter((path) => !path.split(/[\\/]/).includes('node_modules'));
    const info: BuildInfo = { inputs: [...own, 'package-lock.json'], assetFiles };
    writeAtomically(join(repoRoot, INFO_FILE), `${JSON.stringify(info, null, 1)}\n`);
    renameSync(scratch, file);
    return { file, bytes: statSync(file).size, inputs: bundle.inputs, assets: scan.paths, warnings: bundle.warnings };
  } finally {
    rmSync(scratch, { force: true });
  }
}

function writeAtomically(path: string, text: string): void {
  const scratch = `${path}.${process.pid}.tmp`;
  writeFileSync(scratch, text);
  renameSync(scratch, path);
}

/** Why dist/ needs building again (missing, or a source newer than the bundle), or null. */
export function runtimeStaleness(repoRoot: string): string | null {
  const file = join(repoRoot, RUNTIME_BUNDLE);
  if (!existsSync(file) || !existsSync(join(repoRoot, INFO_FILE))) return `${RUNTIME_BUNDLE} is missing`;
  const builtMs = statSync(file).mtimeMs;
  const { inputs } = readBuildInfo(repoRoot);
  for (const input of inputs) {
    const path = join(repoRoot, input);
    if (!existsSync(path)) return `${input} is gone`;
    if (statSync(path).mtimeMs > builtMs) return `${input} changed after the build`;
  }
  return null;
}

export function readBuildInfo(repoRoot: string): BuildInfo {
  return JSON.parse(readFileSync(join(repoRoot, INFO_FILE), 'utf8')) as BuildInfo;
}

/** Builds dist/ when it is missing or stale; the reason it was built, or null when it was fresh. */
export async function ensureRuntimeBuilt(repoRoot: string): Promise<string | null> {
  const reason = runtimeStaleness(repoRoot);
  if (reason) await buildRuntime(repoRoot);
  return reason;
}
