// The runner `npm test` uses (scripts/tap-files.mjs): what it reports decides whether CI passes, so
// a failing assertion, a crash after passing tests and a file that never ends must each fail the run.
import t, { type Test } from 'tap';
import { join } from 'node:path';
import { fileCounts, runTapFiles } from '../scripts/tap-files.mjs';

const FILES = {
  'pass.mjs':
    `import t from 'tap';\nt.test('alpha', async (t) => t.pass('a'));\nt.test('beta', async (t) => { ` +
    `t.pass('b'); t.pass('c'); });\n`,
  'fail.mjs': `import t from 'tap';\nt.equal(1, 2, 'one is two');\nt.pass('fine');\n`,
  'crash.mjs': `import t from 'tap';\nt.pass('before');\nconsole.error('about to crash');\nprocess.exit(3);\n`,
  'hang.mjs': `import t from 'tap';\nt.pass('started');\nsetInterval(() => {}, 1000);\n`,
};

async function run(
  t: Test,
  names: (keyof typeof FILES)[],
  extra: { grep?: string[]; jobs?: number; timeoutS?: number } = {},
) {
  // inside the checkout (.tap/fixtures), so `tap` resolves from its node_modules
  const dir = t.testdir(FILES);
  let output = '';
  const result = await runTapFiles({
    files: names.map((name) => ({ name, path: join(dir, name) })),
    // generous: on a loaded machine starting node and tap alone can take seconds
    cwd: dir,
    env: process.env,
    jobs: extra.jobs ?? 2,
    timeoutS: extra.timeoutS ?? 90,
    grep: extra.grep,
    write: (text) => {
      output += text;
    },
  });
  return { ...result, output };
}

t.test("a passing file is one line; the totals are the sum of every file's assertions", async (t) => {
  const { totals, failed, output, times } = await run(t, ['pass.mjs', 'pass.mjs']);
  t.same(failed, []);
  t.same(
    times.map((f) => f.name),
    ['pass.mjs', 'pass.mjs'],
    'a wall time per file',
  );
  t.match(totals, { total: 6, pass: 6, fail: 0 });
  t.match(output, /^ok 1 - pass\.mjs # time=\d+ms$/m);
  t.match(output, /^1\.\.2$/m);
  t.notMatch(output, /# Subtest: alpha/, "a passing file's own TAP is not printed");
});

t.test('a failed assertion and a crash after passing tests fail, with their output', async (t) => {
  const { totals, failed, output } = await run(t, ['fail.mjs', 'crash.mjs']);
  t.same([...failed].sort(), ['crash.mjs', 'fail.mjs']);
  t.equal(totals.fail, 2, 'the failed assertion, and one for the file that failed without one');
  t.match(output, /^not ok \d+ - fail\.mjs # 1 failed/m);
  t.match(output, /^ {4}not ok 1 - one is two$/m, "the failing file's TAP, indented");
  t.match(output, /^not ok \d+ - crash\.mjs # exit code 3 after its tests passed/m);
  t.match(output, /^ {4}# stderr: about to crash$/m);
});

t.test('a file that never ends is stopped at the timeout and fails', async (t) => {
  const { totals, failed, output } = await run(t, ['hang.mjs'], { timeoutS: 8 });
  t.same(failed, ['hang.mjs']);
  t.equal(totals.fail, 1);
  t.match(output, /^not ok 1 - hang\.mjs # timed out after 8 s/m);
  t.match(output, /^ {4}ok 1 - started$/m, 'with what it printed before');
});

t.test('--grep reaches tap through TAP_GREP', async (t) => {
  const { totals } = await run(t, ['pass.mjs'], { grep: ['beta'] });
  t.match(totals, { pass: 2, skip: 1, fail: 0 });
});

t.test("the counts are tap's last summary line of the file", async (t) => {
  t.same(fileCounts('ok 1 - x\n# { total: 3, pass: 2, fail: 1 }\n# time=4ms\n'), {
    total: 3,
    pass: 2,
    fail: 1,
    skip: 0,
    todo: 0,
  });
  t.equal(fileCounts('ok 1 - x\n'), null, 'no summary: the file did not end');
});
