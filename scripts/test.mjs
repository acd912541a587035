#!/usr/bin/env node
// Runs the tap suite under V8 coverage and closes with the plain "N passed, N failed" line that
// CI reads, taken from tap's own summary; tap's exit code is kept, and a coverage figure below
// the minimum makes the run fail too. Tap runs esbuild bundles of the test files
// (scripts/test-bundles.mjs), not the .ts files through tsx.
//
// Coverage is measured here with c8, not by tap: tap records coverage through the inspector,
// whose source maps (tsx's) came without the original texts, and every .ts file showed as one
// covered line. With NODE_V8_COVERAGE set, Node writes raw coverage for every process (the
// bundles, and the children tests start through tsx, whose maps then carry their sources), and
// c8 maps it back to the .ts files, adding the files no test loads at 0%.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Report } from 'c8';
import { buildTestBundles, bundleOf, testFiles } from './test-bundles.mjs';

// Minimum share of lines run by the suite, over the product's .ts files.
const MIN_LINES_PCT = 80;
const SOURCES = ['{core,pipeline,store,http,accounts,docs,status,web,exports,webhooks,stream,fixtures,app,sea,admin,observability,broker}/**/*.ts'];
// Test files beside the code. Code that exists only for tests or benches (doubles, harnesses,
// fault servers, child processes, test data) lives under test/support/ and bench/, outside
// SOURCES; test/architecture.test.ts keeps it out of the production folders. The pages' browser
// code (web/client/, status/client/) runs in Chromium, where Node's coverage does not reach.
const NOT_SOURCES = ['**/node_modules/**', '**/*.test.ts', 'web/client/**', 'status/client/**'];

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
// paths (test files, folders) choose what runs; tap's options pass through
const selections = args.filter((a) => !a.startsWith('-') && existsSync(a)).map((a) => relative(root, join(process.cwd(), a)));
const tapOptions = args.filter((a) => a.startsWith('-') || !existsSync(a));
// Private per run, so concurrent runs in the same tree never merge each other's coverage or bundles.
const rawCoverage = mkdtempSync(join(tmpdir(), 'transit-api-v8-coverage-'));
const bundleDir = mkdtempSync(join(root, '.test-build-'));
const removeRunFiles = () => {
  rmSync(rawCoverage, { recursive: true, force: true });
  rmSync(bundleDir, { recursive: true, force: true });
};
const tap = join(root, 'node_modules', '.bin', 'tap');
let files;
try {
  buildTapPlugins();
  files = testFiles(root, selections);
  const bundling = performance.now();
  const warnings = await buildTestBundles(root, files, bundleDir);
  for (const warning of warnings) console.log(`# esbuild: ${warning}`);
  console.log(`# ${files.length} test files bundled in ${Math.round(performance.now() - bundling)} ms (scripts/test-bundles.mjs)`);
} catch (error) {
  // a test file that does not compile fails the run like a failing test, with esbuild's words
  console.log(`# the tests could not be prepared: ${error instanceof Error ? error.message : error}`);
  removeRunFiles();
  console.log('0 passed, 1 failed');
  process.exit(1);
}

// --node-arg on the command line replaces .taprc's (tsx): the bundles are plain JavaScript
const child = spawn(tap, ['--reporter=tap', '--disable-coverage', '--node-arg=--enable-source-maps', ...tapOptions, ...files.map((file) => bundleOf(bundleDir, file))], {
  cwd: root,
  env: { ...process.env, NODE_V8_COVERAGE: rawCoverage },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString('utf8')).slice(-4096);
});
child.on('close', async (code, signal) => {
  const counts = tapCounts(tail);
  const tapExit = code ?? (signal ? 1 : 0);
  let coverageFailed = false;
  try {
    // An interrupted run has nothing worth measuring.
    if (!signal) coverageFailed = !(await checkCoverage(args.length === 0));
  } catch (error) {
    console.log(`# coverage could not be measured: ${error instanceof Error ? error.message : error}`);
    coverageFailed = true;
  } finally {
    removeRunFiles();
  }
  if (tapExit !== 0 && counts.fail === 0) console.log('# tap exited non-zero (a test file crashed or timed out)');
  const failed = counts.fail + (tapExit !== 0 && counts.fail === 0 ? 1 : 0) + (coverageFailed ? 1 : 0);
  console.log(`# ${counts.skip} skipped, ${counts.todo} todo`);
  console.log(`${counts.pass} passed, ${failed} failed`);
  process.exit(tapExit !== 0 ? tapExit : coverageFailed ? 1 : 0);
});

/**
 * Builds tap's plugin set as .taprc lists it once after every install (and after .taprc changes).
 * Tap rebuilds it by itself on the first run that finds it different, but hands that run's test
 * processes the loaders of the set it started with: after `npm ci`, tap's default set, whose
 * TypeScript plugin put ts-node's loader hooks in every test process (CI's run took 613 s of tap
 * time, the same clone's next run 465 s).
 */
function buildTapPlugins() {
  const stamp = join(root, 'node_modules', '.cache', 'transit-api', 'tap-build');
  const mtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : -Infinity);
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : null;
  const installed = mtime(join(root, 'node_modules', '.package-lock.json'));
  if (built !== null && built >= installed && built >= mtime(join(root, '.taprc'))) return;
  console.log("# building tap's plugins as .taprc lists them (tap build, once after an install)");
  const build = spawnSync(tap, ['build'], { cwd: root, stdio: ['ignore', process.stderr, 'inherit'] });
  if (build.status !== 0) throw new Error(`tap build exited with ${build.status ?? build.signal}`);
  mkdirSync(dirname(stamp), { recursive: true });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
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

function tapCounts(text) {
  const summary = [...text.matchAll(/^# (\{[^}\n]*\})\s*$/gm)].pop();
  const counts = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
  if (summary) {
    for (const [, key, value] of summary[1].matchAll(/(\w+):\s*(\d+)/g)) counts[key] = Number(value);
  }
  return counts;
}

// Writes coverage/coverage.txt (per file) and coverage/coverage-summary.json, prints the total.
// A run limited by arguments (some files, --grep …) covers only part of the code: its figure is
// printed but the minimum applies to the whole suite only. Returns false when below the minimum.
async function checkCoverage(enforce) {
  const started = performance.now();
  keepOwnScripts(rawCoverage);
  const reportsDirectory = join(root, 'coverage');
  process.chdir(root); // c8 matches include/exclude against paths relative to the cwd
  const report = matchSourcesByPath(new Report({
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
  }));
  await report.run();
  const map = await report.getCoverageMapFromAllCoverageFiles();
  const { lines } = map.getCoverageSummary();
  const where = relative(root, join(reportsDirectory, 'coverage.txt'));
  const figure = `lines ${lines.pct}% (${lines.covered} of ${lines.total} in ${map.files().length} files)`;
  console.log(`# coverage measured in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  if (!enforce) {
    console.log(`# coverage of this partial run: ${figure}; the ${MIN_LINES_PCT}% minimum applies to the whole suite (${where})`);
    return true;
  }
  if (lines.total > 0 && lines.pct >= MIN_LINES_PCT) {
    console.log(`# coverage: ${figure}, minimum ${MIN_LINES_PCT}% (${where})`);
    return true;
  }
  console.log(`# coverage too low: ${figure} is under the ${MIN_LINES_PCT}% minimum (per file: ${where})`);
  return false;
}
