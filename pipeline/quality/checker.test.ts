import t from 'tap';
import type { FeedMessageMsg } from '../gtfs-rt-types.ts';
import { FeedQualityChecker } from './checker.ts';

const message = (timestamp: number): FeedMessageMsg =>
  ({ header: { gtfs_realtime_version: '2.0', incrementality: 0, timestamp }, entity: [] }) as unknown as FeedMessageMsg;
// protobufjs marks fields on the wire as own properties; these are plain objects, so all are own

const T = 1_700_000_000;

t.test('the sequence rules per feed: the snapshot before, gaps, the poll interval', async (t) => {
  const checker = new FeedQualityChecker();
  const poll = (sha256: string, interval_s: number | null = 15) => ({ sha256, now_ms: null, interval_s });
  t.same(checker.check('a', message(T), poll('1')), {}, 'the first snapshot: nothing to compare with');
  t.same(checker.check('b', message(T - 100), poll('x')), {}, 'another feed has its own');
  t.same(checker.check('a', message(T + 40), poll('2')), { W007: { count: 1, example: null } });
  t.same(checker.check('a', message(T + 40), poll('3')), { E017: { count: 1, example: null } });
  t.same(checker.check('a', message(T + 40), poll('3')), {}, 'the same body again is no change');
  t.same(checker.check('a', message(T + 30), poll('4')), { E018: { count: 1, example: null } });
  t.same(checker.check('a', message(T + 80), poll('5', 60)), {}, 'polled every 60 s: W007 cannot tell');
  checker.gap('a');
  t.same(checker.check('a', message(T + 130), poll('6')), {}, 'a failed poll between: no W007');
  checker.forget('a');
  t.same(checker.check('a', message(T), poll('7')), {}, 'forgotten: no E018 against the old one');
});

t.test('the clock rules need the clock', async (t) => {
  const checker = new FeedQualityChecker();
  t.same(checker.check('a', message(T), { sha256: '1', now_ms: (T + 66) * 1000, interval_s: 15 }), {
    W008: { count: 1, example: null },
  });
  t.same(checker.check('c', message(T + 200), { sha256: '2', now_ms: T * 1000, interval_s: 15 }), {
    E050: { count: 1, example: null },
  });
  t.same(checker.check('b', message(T), { sha256: '1', now_ms: null, interval_s: 15 }), {});
});
