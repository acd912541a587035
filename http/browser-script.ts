// The pages' browser code is TypeScript (dashboard/client/, status/client/), type-checked by
// tsconfig.browser.json and bundled by esbuild into one IIFE per page, which the page inlines and
// allows by its hash. From the sources (tsx: dev, tests) the bundle is made here, once per process
// the first time a page asks; esbuild is a devDependency, present wherever the sources run. The
// built runtime and the binary never run this module: binary/build/bundle.ts replaces it with the
// scripts bundled at build time (prebuiltScripts below), so neither ships esbuild.
import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';

export const BROWSER_ENTRIES = ['dashboard/client/main.ts', 'status/client/page.ts'] as const;
export type BrowserEntry = (typeof BROWSER_ENTRIES)[number];

export interface BrowserBundle {
  code: string;
  /** repository-relative sources in the bundle */
  inputs: string[];
}

/** The one esbuild configuration of the browser code. */
export function bundleBrowserScript(repoRoot: string, entry: BrowserEntry): BrowserBundle {
  const result = buildSync({
    absWorkingDir: repoRoot,
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    charset: 'utf8',
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild wrote nothing for ${entry}`);
  return { code: file.text, inputs: Object.keys(result.metafile.inputs) };
}

/** The module the production bundle holds instead of this one: the scripts as string constants. */
export function prebuiltScripts(scripts: Readonly<Record<BrowserEntry, string>>): string {
  return (
    `const SCRIPTS = ${JSON.stringify(scripts)};\n` +
    'export function browserScript(entry) {\n' +
    '  const code = SCRIPTS[entry];\n' +
    "  if (code === undefined) throw new Error('no browser script was built for ' + entry);\n" +
    '  return code;\n' +
    '}\n'
  );
}

const built = new Map<BrowserEntry, string>();

/** The page script of `entry`, bundled. */
export function browserScript(entry: BrowserEntry): string {
  let code = built.get(entry);
  if (code === undefined) {
    code = bundleBrowserScript(fileURLToPath(new URL('..', import.meta.url)), entry).code;
    built.set(entry, code);
  }
  return code;
}
