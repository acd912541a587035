import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseConfig, ConfigError, loadConfig } from './config.ts';

t.test('defaults are filled and frozen', async (t) => {
  const c = parseConfig({});
  t.equal(c.port, 8080);
  t.equal(c.db_path, 'data/transit.duckdb');
  t.ok(Object.isFrozen(c));
  t.ok(Object.isFrozen(c.freshness));
});

t.test('env overrides port and db', async (t) => {
  const c = parseConfig({ port: 1 }, { TRANSIT_PORT: '9999', TRANSIT_DB: '/tmp/x.duckdb' });
  t.equal(c.port, 9999);
  t.equal(c.db_path, '/tmp/x.duckdb');
});

t.test('every problem is listed by path', async (t) => {
  try {
    parseConfig({
      port: 'x',
      feeds: [
        { id: 'a', kind: 'gtfs-rt', url: 'ftp://x' },
        { id: 'a', kind: 'nope', url: 'http://x' },
      ],
      bogus: 1,
    });
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    t.match(problems, /port:/);
    t.match(problems, /feeds\.0\.url: must be an http/);
    t.match(problems, /feeds\.1\.kind/);
    t.match(problems, /bogus/);
  }
});

t.test('duplicate feed ids and inverted freshness are refused', async (t) => {
  t.throws(
    () =>
      parseConfig({
        feeds: [
          { id: 'a', kind: 'gtfs-rt', url: 'http://x' },
          { id: 'a', kind: 'gtfs-rt', url: 'http://y' },
        ],
      }),
    /duplicate feed id/,
  );
  t.throws(() => parseConfig({ freshness: { stale_after_s: 100, expired_after_s: 50 } }), /expired_after_s/);
  t.throws(() => parseConfig({}, { TRANSIT_PORT: 'abc' }), /TRANSIT_PORT/);
});

t.test('feeds[].trip_matching: auto by default, one strategy or several in order', async (t) => {
  const feed = (trip_matching?: unknown) =>
    parseConfig({ feeds: [{ id: 'a', kind: 'gtfs-rt', url: 'http://x', trip_matching }] }).feeds[0]!.trip_matching;
  t.equal(feed(), 'auto');
  t.equal(feed('nyct'), 'nyct');
  t.same(feed(['start', 'exact']), ['start', 'exact']);
  t.throws(() => feed('fuzzy'), /feeds\.0\.trip_matching/);
  t.throws(() => feed([]), /feeds\.0\.trip_matching/);
  t.same(feed(['nyct', 'nyct_loose']), ['nyct', 'nyct_loose']);
});

t.test('feeds[].route_aliases: none by default, feed route → schedule route', async (t) => {
  const aliases = (route_aliases?: unknown) =>
    parseConfig({ feeds: [{ id: 'a', kind: 'gtfs-rt', url: 'http://x', route_aliases }] }).feeds[0]!.route_aliases;
  t.same(aliases(), {});
  t.same(aliases({ S: 'GS', '5X': '5' }), { S: 'GS', '5X': '5' });
  t.throws(() => aliases({ S: '' }), /feeds\.0\.route_aliases/);
  t.throws(() => aliases(['S', 'GS']), /feeds\.0\.route_aliases/);
});

t.test('log_level: from the file, TRANSIT_LOG_LEVEL over it, unknown levels refused', async (t) => {
  t.equal(parseConfig({}).log_level, 'info');
  t.equal(parseConfig({ log_level: 'warn' }).log_level, 'warn');
  t.equal(
    parseConfig({ log_level: 'warn' }, { TRANSIT_LOG_LEVEL: 'debug' }).log_level,
    'debug',
    'the environment beats the file',
  );
  t.throws(() => parseConfig({}, { TRANSIT_LOG_LEVEL: 'loud' }), /TRANSIT_LOG_LEVEL: must be one of/);
  t.throws(() => parseConfig({ log_level: 'loud' }), /log_level/);
});

t.test('schedules[].refresh_cron: daily by default, checked with node-cron', async (t) => {
  t.equal(parseConfig({ schedules: [{ id: 'm', source: 'm.zip' }] }).schedules[0]!.refresh_cron, '41 3 * * *');
  t.equal(
    parseConfig({ schedules: [{ id: 'm', source: 'm.zip', refresh_cron: '*/30 * * * *' }] }).schedules[0]!.refresh_cron,
    '*/30 * * * *',
  );
  t.throws(
    () => parseConfig({ schedules: [{ id: 'm', source: 'm.zip', refresh_cron: 'every day' }] }),
    /schedules\.0\.refresh_cron: not a valid cron expression/,
  );
});

t.test('every cron key is checked with node-cron when the config is read', async (t) => {
  const bad = 'every day';
  const err = (() => {
    try {
      parseConfig({
        prune_cron: bad,
        exports: { cron: bad },
        snapshot: { cron: bad },
        reliability: { finalize_cron: bad },
      });
    } catch (e) {
      return e as { problems: string[] };
    }
    return null;
  })();
  t.strictSame(err?.problems.map((p) => p.split(':')[0]).sort(), [
    'exports.cron',
    'prune_cron',
    'reliability.finalize_cron',
    'snapshot.cron',
  ]);
});

t.test("a section left out or given in part takes each key's own default (written once)", async (t) => {
  const all = parseConfig({});
  const part = parseConfig({ sse: { ping_interval_s: 5 }, exports: { dir: 'x' } });
  t.equal(part.sse.ping_interval_s, 5);
  t.strictSame({ ...part.sse, ping_interval_s: all.sse.ping_interval_s }, all.sse);
  t.strictSame({ ...part.exports, dir: all.exports.dir }, all.exports);
  t.equal(all.snapshot.cron, '*/15 * * * *');
  t.strictSame(all.store, { memory_limit: '1GB' });
});

t.test('a config file may carry // and /* */ comments; a mistake is still reported with its position', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'transit.jsonc');
  writeFileSync(
    file,
    '// written by transit-api init\n{\n  // loopback only\n  "host": "127.0.0.1", /* the port */ "port": 8081,\n  ' +
      '"feeds": [{ "id": "a", "kind": "gtfs-rt", "url": "https://example.org/a//vp.pb" }]\n}\n',
  );
  const config = loadConfig(file, {});
  t.equal(config.host, '127.0.0.1');
  t.equal(config.port, 8081);
  t.equal(config.feeds[0]!.url, 'https://example.org/a//vp.pb', 'a // inside a string is not a comment');
  writeFileSync(file, '{\n  // a comment\n  "port": ,\n}\n');
  t.throws(() => loadConfig(file, {}), /not valid JSON/);
});
