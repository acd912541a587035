import { build, type Message, type Plugin } from 'esbuild';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BROWSER_ENTRIES, bundleBrowserScript, prebuiltScripts, type BrowserEntry } from '../../http/browser-script.ts';

// The app as one CommonJS file, the one esbuild configuration of the project, for its two builds:
// - the single executable (scripts/build-binary.ts): SEA runs a CommonJS script whose require
//   reaches only Node's built-ins, so everything else must be inside the bundle, and the two
//   native loaders are swapped for binary/native.ts;
// - the built runtime in dist/ (scripts/build.ts, run by `npm run build` and `prepare`): the same
//   bundle, but the native packages stay require()s that Node resolves from node_modules, where
//   their own loaders pick the addon for the platform.

/** The packages that load native addons: never inside a bundle. */
export const NATIVE_PACKAGES = ['uWebSockets.js', '@duckdb/node-bindings'] as const;

export interface BundleOptions {
  repoRoot: string;
  entry: string;
  outfile: string;
  /**
   * SEA: the addon file names by the module they replace; 'node_modules': the native packages
   * are left to require() at run time
   */
  natives: { uws: string; duckdb: string } | 'node_modules';
}

export interface Bundle {
  /** repository-relative sources inside the bundle (node_modules included) */
  inputs: string[];
  warnings: string[];
}

/**
 * Packages whose ESM build reads import.meta.url at load time (empty in a CommonJS bundle) while
 * their CommonJS build uses __filename: node-cron computes its daemon path on import.
 */
const PREFER_COMMONJS = ['node-cron'];

const NATIVE_LOADER = fileURLToPath(new URL('../native.ts', import.meta.url));

const NATIVE_MODULE = new RegExp(`^(${NATIVE_PACKAGES.map((name) => name.replace(/[./]/g, '\\$&')).join('|')})$`);

function nativesPlugin(repoRoot: string, natives: BundleOptions['natives']): Plugin {
  const require = createRequire(join(repoRoot, 'package.json'));
  return {
    name: 'transit-natives',
    setup(b) {
      if (natives === 'node_modules') {
        b.onResolve({ filter: NATIVE_MODULE }, (args) => ({ path: args.path, external: true }));
      } else {
        const replaced: Record<string, string> = {
          'uWebSockets.js': natives.uws,
          '@duckdb/node-bindings': natives.duckdb,
        };
        b.onResolve({ filter: NATIVE_MODULE }, (args) => ({ path: args.path, namespace: 'sea-native' }));
        b.onLoad({ filter: /.*/, namespace: 'sea-native' }, (args) => ({
          contents:
            `module.exports = ` +
            `require(${JSON.stringify(NATIVE_LOADER)}).loadNativeAddon(${JSON.stringify(replaced[args.path])});\n`,
          resolveDir: repoRoot,
          loader: 'js',
        }));
      }
      const preferCjs = new RegExp(`^(${PREFER_COMMONJS.join('|')})$`);
      b.onResolve({ filter: preferCjs }, (args) => ({ path: require.resolve(args.path) }));
    },
  };
}

const BROWSER_SCRIPT_MODULE = /[\\/]http[\\/]browser-script\.ts$/;

/**
 * The pages' browser code, bundled now (http/browser-script.ts): the module that would bundle it
 * at run time is replaced by the finished scripts, so the bundle needs no esbuild. `inputs`
 * collects the browser sources, so a changed one makes the build stale.
 */
function browserScriptsPlugin(repoRoot: string, inputs: Set<string>): Plugin {
  return {
    name: 'transit-browser-scripts',
    setup(b) {
      b.onLoad({ filter: BROWSER_SCRIPT_MODULE }, () => {
        const scripts = {} as Record<BrowserEntry, string>;
        for (const entry of BROWSER_ENTRIES) {
          const bundle = bundleBrowserScript(repoRoot, entry);
          scripts[entry] = bundle.code;
          for (const input of bundle.inputs) inputs.add(input);
        }
        return { contents: prebuiltScripts(scripts), loader: 'js', resolveDir: repoRoot };
      });
    },
  };
}

function describe(message: Message): string {
  const where = message.location ? `${message.location.file}:${message.location.line}: ` : '';
  return `${where}${message.text}`;
}

/**
 * A warning that would be a failure at run time fails the build: import.meta outside
 * core/assets.ts (its only reader of import.meta.url, never reached inside the binary).
 */
function fatal(message: Message): boolean {
  return message.id === 'empty-import-meta' && !expected(message);
}

/**
 * Warnings that are by design: core/assets.ts reads import.meta.url only outside the binary, and
 * a bare `import 'zod-openapi'` (type augmentation only) is dropped since the package declares
 * no side effects.
 */
function expected(message: Message): boolean {
  if (message.id === 'ignored-bare-import') return true;
  return message.id === 'empty-import-meta' && message.location?.file.split(sep).join('/') === 'core/assets.ts';
}

export async function bundleApp(options: BundleOptions): Promise<Bundle> {
  const browserInputs = new Set<string>();
  const result = await build({
    absWorkingDir: options.repoRoot,
    entryPoints: [options.entry],
    outfile: options.outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    metafile: true,
    logLevel: 'silent',
    legalComments: 'eof',
    plugins: [nativesPlugin(options.repoRoot, options.natives), browserScriptsPlugin(options.repoRoot, browserInputs)],
  });
  const failures = result.warnings.filter(fatal).map(describe);
  if (failures.length) {
    throw new Error(
      `the bundle would break at run time:\n  ${failures.join('\n  ')}\nread the file through assetPath() ` +
        `from core/assets.ts`,
    );
  }
  const inputs = [...Object.keys(result.metafile.inputs), ...browserInputs]
    .filter((path) => !path.includes(':'))
    .map((path) => relative(options.repoRoot, join(options.repoRoot, path)));
  return { inputs, warnings: result.warnings.filter((w) => !expected(w)).map(describe) };
}
