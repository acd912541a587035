import t from 'tap';
import { iso, isoOr } from './api-shapes.ts';

t.test('iso writes what Date#toISOString writes, for every kind of instant', async (t) => {
  const samples = [
    0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 1_700_000_000_000, 1_700_000_000_007,
    1_700_000_000_070, 4_102_444_800_000 /* 2100-01-01 */, 253_402_300_799_999, 253_402_300_800_000, -1, -86_400_001,
    1_700_000_000_000.5, 8.64e15, -8.64e15,
  ];
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) samples.push(Math.floor(random() * 4_102_444_800_000));
  let differing = 0;
  for (const ms of samples) if (iso(ms) !== new Date(ms).toISOString()) differing++;
  t.equal(differing, 0, `${samples.length} instants, none differ`);
  // a second pass reads the cached day prefixes
  t.equal(samples.filter((ms) => iso(ms) !== new Date(ms).toISOString()).length, 0);
});

t.test('iso: null for what a Date cannot hold', async (t) => {
  t.same([iso(null), iso(undefined), iso(Number.NaN), iso(Infinity), iso(8.64e15 + 1)], [null, null, null, null, null]);
  t.equal(isoOr(Number.NaN, 0), '1970-01-01T00:00:00.000Z');
});
