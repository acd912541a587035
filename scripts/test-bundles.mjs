// The suite's test files bundled with esbuild before tap runs them, so a test process starts on
// plain node. Run through tsx, every test process resolved and loaded each of its hundreds of
// modules through tsx's loader thread: about a CPU-second per file before a test ran (an empty
// test file: 1.3 s through tsx, 0.6 s bundled). Bundled, the suite took 15% less CPU (1,025 →
// 877 s) and 8m10 instead of 9m20 on two cores (2026-11-25, quiet machine). Bundles are split
// into shared chunks (one build, ~1 s, ~9 MB); node_modules stay external, loaded by node itself.
//
// What stays as in the sources: every module keeps its own `import.meta.url`, `.dirname` and
// `.filename` (the defines below, applied by esbuild's parser, so text inside string literals is
// untouched), which the code uses to find the files it reads (core/assets.ts, tests' fixtures). Source maps
// carry the .ts texts: c8 maps coverage back to them, and stack traces name .ts lines.
// Children that tests start from the sources (test/support/cli.ts, binary/) still run through tsx.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, transform } from 'esbuild';

/**
 * The project's folders from folders.json (the one list of them): `production` (the tiers'
 * folders, in tier order), `tests` (where test files are run from: the production folders and
 * test/), `browserCode` (the pages' browser code, which runs in Chromium).
 */
export function projectFolders(root) {
  const { tiers, browserCode } = JSON.parse(readFileSync(join(root, 'folders.json'), 'utf8'));
  const production = tiers.flatMap((tier) => tier.folders);
  return { production, tests: [...production, 'test'], browserCode };
}

/**
 * The test files to run: those under the production folders and test/ (projectFolders), or,
 * when paths are given (files or folders, from the root), the test files among them.
 */
export function testFiles(root, selections = []) {
  const folders = projectFolders(root).tests;
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) files.push(relative(root, path));
    }
  };
  if (selections.length === 0) for (const folder of folders) walk(join(root, folder));
  for (const selection of selections) {
    const path = join(root, selection);
    if (statSync(path).isDirectory()) walk(path);
    else if (selection.endsWith('.test.ts')) files.push(selection);
    else throw new Error(`${selection} is not a test file (*.test.ts) or a folder`);
  }
  return [...new Set(files)].sort();
}

/** The bundle tap runs for a test file given from the root (`core/dates.test.ts`). */
export function bundleOf(bundleDir, file) {
  return join(bundleDir, file.split(sep).join('/').replace(/\.ts$/, '.mjs'));
}

/**
 * Builds the bundles of `files` (paths from `root`) into `outdir`, a folder of the checkout (its
 * node_modules must resolve from there), one per run so that two runs never share one.
 */
export async function buildTestBundles(root, files, outdir) {
  const ownImportMetaUrl = {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.')) return { contents: text, loader: 'ts' };
        const out = await transform(text, {
          loader: 'ts',
          format: 'esm',
          target: 'node20',
          sourcefile: args.path,
          sourcemap: 'inline',
          sourcesContent: true,
          define: {
            'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
            'import.meta.dirname': JSON.stringify(dirname(args.path)),
            'import.meta.filename': JSON.stringify(args.path),
          },
        });
        return { contents: out.code, loader: 'js' };
      });
    },
  };
  const result = await build({
    absWorkingDir: root,
    entryPoints: files,
    outdir,
    outbase: root,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    // whole modules, as tsx loads them: a function shaken out would have no coverage and count as covered
    treeShaking: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    sourcesContent: true,
    plugins: [ownImportMetaUrl],
    logLevel: 'silent',
  });
  return result.warnings.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''} ${w.text}`);
}
