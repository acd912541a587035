import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { diffConfig } from './reload.ts';

const feed = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'gtfs-rt',
  url: `https://example.org/${id}.pb`,
  ...extra,
});

t.test('what a reload applies and what waits for a restart', async (t) => {
  const running = parseConfig({
    port: 8080,
    feeds: [feed('a'), feed('b'), feed('c')],
    schedules: [{ id: 'metro', source: 'gtfs.zip' }],
  });
  const next = parseConfig({
    port: 9090,
    api: { key_recheck_ms: 500 },
    feeds: [feed('a'), feed('b', { interval_s: 30 }), feed('d')],
    schedules: [
      { id: 'metro', source: 'gtfs-2.zip' },
      { id: 'ferry', source: 'ferry.zip' },
    ],
  });
  const diff = diffConfig(running, next);
  t.same(
    diff.feeds.added.map((f) => f.id),
    ['d'],
  );
  t.same(
    diff.feeds.changed.map((f) => f.id),
    ['b'],
    'a feed whose settings changed',
  );
  t.same(diff.feeds.removed, ['c']);
  t.same(
    diff.schedules.added.map((s) => s.id),
    ['ferry'],
  );
  t.same(
    diff.schedules.changed.map((s) => s.id),
    ['metro'],
  );
  t.same(diff.schedules.removed, []);
  t.same(diff.needs_restart, ['api.key_recheck_ms', 'port'], 'other settings by path');

  const same = diffConfig(
    running,
    parseConfig({
      port: 8080,
      feeds: [feed('a'), feed('b'), feed('c')],
      schedules: [{ id: 'metro', source: 'gtfs.zip' }],
    }),
  );
  t.same(
    same,
    {
      feeds: { added: [], changed: [], removed: [] },
      schedules: { added: [], changed: [], removed: [] },
      needs_restart: [],
    },
    'the same file changes nothing',
  );
});
