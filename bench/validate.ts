// The feed rules' cost, each figure beside a baseline measured in the same run:
//  1. `transit-api validate` (its engine: read, decode, every rule, findings, summary) over a folder
//     of SNAPSHOTS files of a VEHICLES-vehicle feed, against reading and decoding the same files
//     alone (target: ≥ 0.8× the decode's speed, judged on the run without a schedule, as the issue
//     words it; --schedule, which adds the trip, route and stop lookups, is printed beside it);
//  2. the per-poll rule check (pipeline/quality, as the pipeline runs it: the decoded message, the
//     schedule, the snapshot before) against the poll's time to the live state through the real
//     pipeline into a DuckDB file, as bench:ingest measures it (target: < 10 % of it); and, beside
//     it, the same polls through a pipeline whose check answers nothing.
//   npm run bench:validate        (SNAPSHOTS=1000 VEHICLES=5000 POLLS=30 ROUNDS=3 to change)
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSources, validateSources } from '../cli/validate.ts';
import { InMemoryEventBus } from '../core/events.ts';
import { createLogger } from '../core/logger.ts';
import type { FeedPoll } from '../core/types.ts';
import { decodeFeedMessage } from '../pipeline/decode.ts';
import type { FetchFn } from '../pipeline/fetch-feed.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { FeedQualityChecker } from '../pipeline/quality/checker.ts';
import { Db } from '../store/db.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { testConfig } from '../test/support/pipeline-fakes.ts';
import { NOW_S, schedule, TRIPS, tripUpdateFeed, VEHICLES, vehicleFeed } from './ingest-feeds.ts';
import { report } from './report.ts';

const SNAPSHOTS = Number(process.env.SNAPSHOTS ?? 1_000);
/** distinct bodies among the files (each encoded once; the files cycle through them) */
const DISTINCT = Math.min(SNAPSHOTS, Number(process.env.DISTINCT ?? 50));
const POLLS = Number(process.env.POLLS ?? 30);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = 5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (v: number) => `${v.toFixed(1)} ms`;

const dir = mkdtempSync(join(tmpdir(), 'bench-validate-'));
try {
  console.log(
    `bench/validate: ${SNAPSHOTS} snapshots of ${VEHICLES} vehicles (${DISTINCT} distinct bodies), ` +
      `${ROUNDS} rounds; per-poll check over ${POLLS} polls after ${WARMUP} warm-up`,
  );
  const folder = join(dir, 'snapshots');
  const bodies = Array.from({ length: DISTINCT }, (_, i) => vehicleFeed(i));
  mkdirSync(folder);
  for (let i = 0; i < SNAPSHOTS; i++)
    writeFileSync(join(folder, `vehicles-${String(i).padStart(5, '0')}.pb`), bodies[i % DISTINCT]!);
  const bytes = bodies[0]!.byteLength;
  console.log(`  ${(bytes / 1024).toFixed(0)} KB a snapshot, ${((bytes * SNAPSHOTS) / 2 ** 20).toFixed(0)} MB in all`);

  // 1. the folder through validate against reading and decoding it. Which goes first alternates
  // by round: the first pass over freshly written files may meet the page cache's writeback.
  const readAll = (): number => {
    const t0 = performance.now();
    for (const name of readdirSync(folder).sort()) readFileSync(join(folder, name));
    return performance.now() - t0;
  };
  const decodeAll = (): number => {
    const t0 = performance.now();
    let entities = 0;
    for (const name of readdirSync(folder).sort()) {
      const decoded = decodeFeedMessage(readFileSync(join(folder, name)));
      if (!decoded.ok) throw new Error(decoded.error);
      entities += decoded.message.entity.length;
    }
    if (entities !== SNAPSHOTS * VEHICLES) throw new Error(`decoded ${entities} entities`);
    return performance.now() - t0;
  };
  const validateAll = async (options: Parameters<typeof validateSources>[1] = {}): Promise<number> => {
    const t0 = performance.now();
    const summary = await validateSources(resolveSources([folder]), options);
    const elapsed = performance.now() - t0;
    if (summary.snapshots !== SNAPSHOTS) throw new Error(`validated ${summary.snapshots}`);
    if (summary.errors + summary.warnings > 0 && !options.series)
      throw new Error(`the bench feed should be clean: ${JSON.stringify(summary.rules)}`);
    return elapsed;
  };
  const readMs: number[] = [];
  const decodeMs: number[] = [];
  const validateMs: number[] = [];
  const withScheduleMs: number[] = [];
  const seriesMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) decodeMs.push(decodeAll());
    validateMs.push(await validateAll());
    withScheduleMs.push(await validateAll({ schedule }));
    seriesMs.push(await validateAll({ series: true }));
    if (r % 2 === 1) decodeMs.push(decodeAll());
    readMs.push(readAll());
  }
  const decodeRate = SNAPSHOTS / (median(decodeMs) / 1000);
  const rate = (times: number[]) => SNAPSHOTS / (median(times) / 1000);
  const line = (what: string, times: number[]) =>
    `  ${what.padEnd(41)} ${rate(times).toFixed(1).padStart(7)} snapshots/s (${ms(median(times))}), ` +
    `${(rate(times) / decodeRate).toFixed(2)}× the decode's speed`;
  console.log(`\nvalidate over the folder (median of ${ROUNDS} rounds):`);
  console.log(
    `  ${'baseline: read + decode each file:'.padEnd(41)} ${decodeRate.toFixed(1).padStart(7)} snapshots/s ` +
      `(${ms(median(decodeMs))}), of which reading the files ${ms(median(readMs))}`,
  );
  console.log(`${line('validate (every rule, no schedule):', validateMs)}  <- the target's figure (≥ 0.8×)`);
  console.log(line('validate --schedule (the bench network):', withScheduleMs));
  console.log(line('validate --series (a hash per file):', seriesMs));
  report({
    bench: 'validate',
    figure: `validate over ${SNAPSHOTS} snapshots of ${VEHICLES} vehicles (snapshots/s, ratio to the decode's speed)`,
    value: rate(validateMs),
    unit: 'snapshots/s',
    baseline: 'reading and decoding the same files alone',
    baselineValue: decodeRate,
    ratio: rate(validateMs) / decodeRate,
    target: '≥ 0.8×',
    met: rate(validateMs) / decodeRate >= 0.8,
  });
  report({
    bench: 'validate',
    figure: `the same with --schedule (trip, route and stop lookups; snapshots/s, ratio to the decode's speed)`,
    value: rate(withScheduleMs),
    unit: 'snapshots/s',
    baseline: 'reading and decoding the same files alone',
    baselineValue: decodeRate,
    ratio: rate(withScheduleMs) / decodeRate,
    met: null,
  });

  // 2. the per-poll check: alone on each poll's message, against the poll's time to the live state
  // (the target's figure: an upper bound, as alone it also pays for hashing the ids it looks up,
  // which the normalizer then finds done); and two pipelines on the same bodies, polls alternating,
  // one with the check and one without (its checker answers nothing), into one DuckDB file.
  const realCheck = FeedQualityChecker.prototype.check;
  let checking = true;
  FeedQualityChecker.prototype.check = function (this: FeedQualityChecker, ...args) {
    return checking ? realCheck.apply(this, args) : {};
  };
  const db = await Db.open(join(dir, 'bench.duckdb'));
  try {
    for (const [kind, feed] of [
      ['vehicles', vehicleFeed],
      ['trip_updates', tripUpdateFeed],
    ] as const) {
      const polled = Array.from({ length: WARMUP + POLLS }, (_, i) => feed(i));
      const pipelineFor = (id: string) => {
        let n = 0;
        const fetch: FetchFn = async () => ({
          kind: 'body',
          body: polled[n++ % polled.length]!,
          http_status: 200,
          etag: null,
          last_modified: null,
        });
        return createPipeline({
          config: testConfig({ feeds: [{ id, kind: 'gtfs-rt', url: 'http://bench.invalid/' }] }),
          bus: new InMemoryEventBus(),
          history: createHistoryWriter(db),
          scheduleFor: () => schedule,
          now: () => NOW_S * 1000 + 2_000,
          fetch,
          log: createLogger(),
        });
      };
      const withCheck = pipelineFor(`${kind}-checked`);
      const without = pipelineFor(`${kind}-unchecked`);
      const checker = new FeedQualityChecker();
      const toLive: number[] = [];
      const toLiveWithout: number[] = [];
      const check: number[] = [];
      let last: FeedPoll | undefined;
      for (let i = 0; i < WARMUP + POLLS; i++) {
        // the check alone, as the pipeline runs it, on the message of this poll's body (decoded apart)
        const decoded = decodeFeedMessage(polled[i]!);
        if (!decoded.ok) throw new Error(decoded.error);
        const c0 = performance.now();
        checker.check(kind, decoded.message, {
          sha256: String(i),
          now_ms: NOW_S * 1000 + 2_000,
          schedule,
          interval_s: 15,
        });
        const c1 = performance.now();
        // which pipeline goes first alternates, so neither always follows the other's history append
        const order = i % 2 === 0 ? [true, false] : [false, true];
        for (const on of order) {
          checking = on;
          const poll = await (on ? withCheck : without).pollOnce(on ? `${kind}-checked` : `${kind}-unchecked`);
          if (on) last = poll;
          if (i >= WARMUP) (on ? toLive : toLiveWithout).push(poll.duration_ms);
        }
        checking = true;
        if (i >= WARMUP) check.push(c1 - c0);
      }
      await withCheck.stop();
      await without.stop();
      if (last?.status !== 'ok') throw new Error(`bench poll not ok: ${JSON.stringify(last)}`);
      const added = (median(toLive) - median(toLiveWithout)) / median(toLiveWithout);
      const alone = median(check) / median(toLive);
      const entities = kind === 'vehicles' ? VEHICLES : TRIPS;
      console.log(
        `\nper-poll rule check, ${kind} (${entities} entities, findings ${JSON.stringify(last.findings)}):\n` +
          `  to the live state without the check: median ${ms(median(toLiveWithout))}\n` +
          `  to the live state with the check:    median ${ms(median(toLive))} (+${(added * 100).toFixed(1)} %)\n` +
          `  the check alone on the same messages: median ${ms(median(check))} (${(alone * 100).toFixed(1)} % of ` +
          `the time to live)`,
      );
      report({
        bench: 'validate',
        figure:
          `per-poll rule check, ${entities} ${kind.replace('_', ' ')}, alone: share of the time to the ` +
          `live state (median)`,
        value: median(check),
        unit: 'ms',
        baseline: 'the poll to the live state, the check included (median)',
        baselineValue: median(toLive),
        ratio: alone,
        target: '< 10 %',
        met: alone < 0.1,
      });
      report({
        bench: 'validate',
        figure: `per-poll rule check, ${entities} ${kind.replace('_', ' ')}: time to the live state with it (median)`,
        value: median(toLive),
        unit: 'ms',
        baseline: 'the same polls without it, alternating (median)',
        baselineValue: median(toLiveWithout),
        ratio: median(toLive) / median(toLiveWithout),
        met: null,
      });
    }
  } finally {
    FeedQualityChecker.prototype.check = realCheck;
    await db.close();
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cpus().length} CPUs`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
