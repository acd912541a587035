// Runs test files (tap's library, one node process each, a few at a time) and reports them as one
// TAP stream: a line per file, the whole output of a file that failed, totals at the end.
//
// Why not tap's own runner: it starts every test process with two loader hooks of its own
// (@tapjs/processinfo, to record which files each test loads for `tap --changed` and its coverage
// map, and @tapjs/mock, for t.mockImport), and puts the first in NODE_OPTIONS, so every node
// process a test starts carries it too. On Node 20 a loader hook runs on a thread of its own that
// every module load goes through: an empty test file took 1.27 CPU-s under tap's runner and
// 0.48 s as `node file` (the same file, tap's library loaded). The suite uses neither feature
// (no test mocks imports; coverage is c8's, scripts/test.mjs). What the runner gave the files is
// its environment, set here the same way: TAP=1 and TAP_TIMEOUT (the root test's timeout) from
// .taprc, TAP_GREP and TAP_BAIL when asked for.
import { spawn } from 'node:child_process';

/** Sums the `# { total: …, pass: … }` line tap's library prints last in a process run alone. */
export function fileCounts(text) {
  const summary = [...text.matchAll(/^# (\{[^}\n]*\})\s*$/gm)].pop();
  if (!summary) return null;
  const counts = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
  for (const [, key, value] of summary[1].matchAll(/(\w+):\s*(\d+)/g)) if (key in counts) counts[key] = Number(value);
  return counts;
}

const indent = (text) =>
  text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');

/**
 * Runs `files` ({ name, path }: name as reported, path of the script node runs), `jobs` at a
 * time, each killed after `timeoutS` seconds. `write` receives the report; resolves with the
 * totals, the names of the files that failed (a failing test, a crash, a timeout), each file's
 * wall time, and whether SIGINT or SIGTERM stopped the run (the files running then were stopped
 * with it).
 */
export function runTapFiles({ files, cwd, env, nodeArgs = [], jobs, timeoutS, grep = [], bail = false, write }) {
  const totals = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
  const failed = [];
  /** wall time of each file, ms, in the order they ended */
  const times = [];
  const running = new Set();
  let next = 0;
  let reported = 0;
  let stopping = false;
  let interrupted = false;
  const started = performance.now();
  const childEnv = {
    ...env,
    TAP: '1',
    TAP_TIMEOUT: String(timeoutS),
    ...(grep.length ? { TAP_GREP: grep.join('\n') } : {}),
    ...(bail ? { TAP_BAIL: '1' } : {}),
  };
  write('TAP version 14\n');

  return new Promise((resolve) => {
    const finish = () => {
      write(`1..${reported}\n`);
      write(
        `# { ${Object.entries(totals)
          .map(([key, n]) => `${key}: ${n}`)
          .join(', ')} }\n`,
      );
      write(`# time=${Math.round(performance.now() - started)}ms\n`);
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', interrupt);
      resolve({ totals, failed, interrupted, times });
    };
    const interrupt = (signal) => {
      stopping = true;
      interrupted = true;
      for (const child of running) child.kill(signal);
    };
    process.on('SIGINT', interrupt);
    process.on('SIGTERM', interrupt);

    const launch = () => {
      while (!stopping && running.size < jobs && next < files.length) runOne(files[next++]);
      if (running.size === 0) finish();
    };

    const runOne = (file) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, [...nodeArgs, file.path], {
        cwd,
        env: childEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      running.add(child);
      const out = [];
      const err = [];
      child.stdout.on('data', (chunk) => out.push(chunk));
      child.stderr.on('data', (chunk) => err.push(chunk));
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }, timeoutS * 1000);
      child.on('error', (error) => err.push(Buffer.from(`could not start: ${error.message}\n`)));
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        running.delete(child);
        const stdout = Buffer.concat(out).toString('utf8');
        const counts = fileCounts(stdout);
        for (const key of Object.keys(totals)) totals[key] += counts?.[key] ?? 0;
        const why = timedOut
          ? `timed out after ${timeoutS} s`
          : counts === null
            ? `ended without a result (${signal ? `signal ${signal}` : `exit code ${code}`})`
            : counts.fail > 0
              ? `${counts.fail} failed`
              : code !== 0
                ? `exit code ${code ?? signal} after its tests passed`
                : null;
        const ms = Math.round(performance.now() - t0);
        times.push({ name: file.name, ms });
        reported += 1;
        if (why === null) {
          write(`ok ${reported} - ${file.name} # time=${ms}ms\n`);
        } else {
          // a crash without a failed test still counts as one failure
          if (!counts || counts.fail === 0) {
            totals.fail += 1;
            totals.total += 1;
          }
          failed.push(file.name);
          write(`not ok ${reported} - ${file.name} # ${why}, time=${ms}ms\n`);
          if (stdout.trim()) write(`${indent(stdout)}\n`);
          const stderr = Buffer.concat(err).toString('utf8').trimEnd();
          if (stderr)
            write(
              `${indent(
                stderr
                  .split('\n')
                  .map((line) => `# stderr: ${line}`)
                  .join('\n'),
              )}\n`,
            );
          if (bail) stopping = true;
        }
        launch();
      });
    };

    launch();
  });
}
