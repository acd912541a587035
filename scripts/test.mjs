#!/usr/bin/env node
// Runs the tap suite under V8 coverage and closes with the plain "N passed, N failed" line that
// CI reads. The test files are esbuild bundles (scripts/test-bundles.mjs), run a few at a time by
// scripts/tap-files.mjs on plain node (not by tap's runner, whose loader hooks cost every test
// process about 0.8 CPU-s: see there); a failing file, a crash, a timeout or a coverage figure
// below the minimum fails the run.
//
// Coverage is measured here with c8, not by tap: tap records coverage through the inspector,
// whose source maps (tsx's) came without the original texts, and every .ts file showed as one
// covered line. With NODE_V8_COVERAGE set, Node writes raw coverage for every process (the
// test bundles, and the children tests start: the CLI bundle, or the sources through tsx), and
// c8 maps it back to the .ts files, adding the files no test loads at 0%.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Report } from 'c8';
import { buildTestBundles, bundleOf, projectFolders, testFiles } from './test-bundles.mjs';
import { runTapFiles } from './tap-files.mjs';

// Minimum share of lines run by the suite, over the product's .ts files.
const MIN_LINES_PCT = 80;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const folders = projectFolders(root);
// every production folder of folders.json
const SOURCES = [`{${folders.production.join(',')}}/**/*.ts`];
// Test files beside the code. Code that exists only for tests or benches (doubles, harnesses,
// fault servers, child processes, test data) lives under test/support/ and bench/, outside
// SOURCES; test/architecture.test.ts keeps it out of the production folders. The pages' browser
// code (folders.json browserCode) runs in Chromium, where Node's coverage does not reach.
const NOT_SOURCES = ['**/node_modules/**', '**/*.test.ts', ...folders.browserCode.map((dir) => `${dir}/**`)];

const CLI_ENTRY = 'cli/main.ts';
const args = process.argv.slice(2);
// paths (test files, folders) choose what runs; the rest are the runner's options
const selections = args
  .filter((a) => !a.startsWith('-') && existsSync(a))
  .map((a) => relative(root, join(process.cwd(), a)));
const options = runnerOptions(args.filter((a) => a.startsWith('-') || !existsSync(a)));
// Private per run, so concurrent runs in the same tree never merge each other's coverage or bundles.
const rawCoverage = mkdtempSync(join(tmpdir(), 'transit-api-v8-coverage-'));
const bundleDir = mkdtempSync(join(root, '.test-build-'));
const removeRunFiles = () => {
  rmSync(rawCoverage, { recursive: true, force: true });
  rmSync(bundleDir, { recursive: true, force: true });
};
let files;
try {
  files = testFiles(root, selections);
  const bundling = performance.now();
  // the CLI too, for the tests that run it as a child process (test/support/cli.ts)
  const warnings = await buildTestBundles(root, [...files, CLI_ENTRY], bundleDir);
  for (const warning of warnings) console.log(`# esbuild: ${warning}`);
  console.log(
    `# ${files.length} test files bundled in ${Math.round(performance.now() - bundling)} ms (scripts/test-bundles.mjs)`,
  );
} catch (error) {
  // a test file that does not compile fails the run like a failing test, with esbuild's words
  console.log(`# the tests could not be prepared: ${error instanceof Error ? error.message : error}`);
  removeRunFiles();
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const { totals, failed, interrupted, times } = await runTapFiles({
  files: files.map((file) => ({ name: file, path: bundleOf(bundleDir, file) })),
  cwd: root,
  env: { ...process.env, NODE_V8_COVERAGE: rawCoverage, TRANSIT_TEST_CLI: bundleOf(bundleDir, CLI_ENTRY) },
  nodeArgs: ['--enable-source-maps'],
  ...options,
  write: (text) => process.stdout.write(text),
});
let coverageFailed = false;
try {
  // an interrupted run has nothing worth measuring
  if (!interrupted) coverageFailed = !(await checkCoverage(selections.length === 0 && options.grep.length === 0));
} catch (error) {
  console.log(`# coverage could not be measured: ${error instanceof Error ? error.message : error}`);
  coverageFailed = true;
} finally {
  removeRunFiles();
}
const slowest = [...times].sort((a, b) => b.ms - a.ms).slice(0, 5);
// where the suite's time goes, for whoever makes it faster (wall times, several files at once)
if (times.length > 5)
  console.log(`# slowest files: ${slowest.map((f) => `${f.name} ${(f.ms / 1000).toFixed(1)} s`).join(', ')}`);
if (failed.length) console.log(`# failed: ${failed.join(', ')}`);
console.log(`# ${totals.skip} skipped, ${totals.todo} todo`);
console.log(`${totals.pass} passed, ${totals.fail + (coverageFailed ? 1 : 0)} failed`);
process.exit(failed.length || coverageFailed ? 1 : 0);

/**
 * The runner's options: `--grep=<pattern>` (repeatable: tap's TAP_GREP, one pattern per level of
 * subtests), `--bail`, `--jobs=<n>` / `-j<n>`, `--timeout=<seconds>` per file; jobs and timeout
 * default to .taprc's.
 */
function runnerOptions(list) {
  const rc = readFileSync(join(root, '.taprc'), 'utf8');
  const fromRc = (key, fallback) => Number(rc.match(new RegExp(`^${key}:\\s*(\\d+)\\s*$`, 'm'))?.[1] ?? fallback);
  const options = { jobs: fromRc('jobs', 2), timeoutS: fromRc('timeout', 30), grep: [], bail: false };
  for (let i = 0; i < list.length; i++) {
    const [flag, inline] = list[i].split(/=(.*)/s);
    const value = () => inline ?? list[++i];
    if (flag === '--grep' || flag === '-g') options.grep.push(value());
    else if (flag === '--bail' || flag === '-b') options.bail = true;
    else if (flag === '--jobs' || flag === '-j') options.jobs = Number(value());
    else if (/^-j\d+$/.test(flag)) options.jobs = Number(flag.slice(2));
    else if (flag === '--timeout' || flag === '-t') options.timeoutS = Number(value());
    else {
      console.error(
        `npm test: unknown option or missing path ${list[i]} (paths, --grep=…, --bail, --jobs=…, --timeout=… seconds)`,
      );
      process.exit(2);
    }
  }
  if (!(options.jobs >= 1) || !(options.timeoutS > 0)) {
    console.error('npm test: --jobs must be 1 or more and --timeout a number of seconds');
    process.exit(2);
  }
  return options;
}

/**
 * Drops from the raw coverage every script outside the checkout or inside node_modules before c8
 * reads it. c8 filters scripts by their own path only when asked to filter after source maps are
 * applied (excludeAfterRemap, needed for the bundles), and otherwise maps every one of them:
 * tap's, zod's, node's own, in each of ~200 processes.
 */
function keepOwnScripts(dir) {
  const own = (url) => url.startsWith(`file://${root}/`) && !url.includes('/node_modules/');
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const coverage = JSON.parse(readFileSync(path, 'utf8'));
    coverage.result = coverage.result.filter((script) => own(script.url));
    const maps = coverage['source-map-cache'];
    if (maps) coverage['source-map-cache'] = Object.fromEntries(Object.entries(maps).filter(([url]) => own(url)));
    writeFileSync(path, JSON.stringify(coverage));
  }
}

/**
 * c8 asks its include/exclude about a bundle's sources by the URLs Node records for them
 * (file:///…/x.ts) while they match paths: every source then counted as excluded while its ranges
 * were applied, and a file's unrun lines as run. (c8's Report is made by a factory, not a class to
 * extend, so the instance's check is wrapped.)
 */
function matchSourcesByPath(report) {
  const shouldInstrument = report._shouldInstrument.bind(report);
  report._shouldInstrument = (name) => shouldInstrument(name.startsWith('file://') ? fileURLToPath(name) : name);
  return report;
}

// Writes coverage/coverage.txt (per file) and coverage/coverage-summary.json, prints the total.
// A run limited by arguments (some files, --grep …) covers only part of the code: its figure is
// printed but the minimum applies to the whole suite only. Returns false when below the minimum.
async function checkCoverage(enforce) {
  const started = performance.now();
  keepOwnScripts(rawCoverage);
  const reportsDirectory = join(root, 'coverage');
  process.chdir(root); // c8 matches include/exclude against paths relative to the cwd
  const report = matchSourcesByPath(
    new Report({
      include: SOURCES,
      exclude: NOT_SOURCES,
      extension: ['.ts'],
      all: enforce,
      src: [root],
      excludeNodeModules: true,
      // coverage is recorded against the bundles; their source maps name the .ts files the filters apply to
      excludeAfterRemap: true,
      mergeAsync: true,
      tempDirectory: rawCoverage,
      reportsDirectory,
      reporter: ['text', 'json-summary'],
      reporterOptions: { text: { file: 'coverage.txt', maxCols: 120 } },
    }),
  );
  await report.run();
  const map = await report.getCoverageMapFromAllCoverageFiles();
  const { lines } = map.getCoverageSummary();
  const where = relative(root, join(reportsDirectory, 'coverage.txt'));
  const figure = `lines ${lines.pct}% (${lines.covered} of ${lines.total} in ${map.files().length} files)`;
  console.log(`# coverage measured in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (!enforce) {
    console.log(
      `# coverage of this partial run: ${figure}; the ${MIN_LINES_PCT}% minimum applies to the whole suite (${where})`,
    );
    return true;
  }
  if (lines.total > 0 && lines.pct >= MIN_LINES_PCT) {
    console.log(`# coverage: ${figure}, minimum ${MIN_LINES_PCT}% (${where})`);
    return true;
  }
  console.log(`# coverage too low: ${figure} is under the ${MIN_LINES_PCT}% minimum (per file: ${where})`);
  return false;
}
