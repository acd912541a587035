// The history export API on the real server: plan gating, filters, cursor pagination, and signed
// downloads checked byte for byte against the manifest and read back by independent readers.
import { createHash, randomFillSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { runExport } from '../exports/job.ts';
import { DAY, LATER, NEXT_DAY, TZ, seedDay } from './support/exports.ts';
import { exportRoutes } from '../http/routes/exports.ts';
import { checker, loadValidator } from './support/client.ts';
import { bearer, startHarness } from './support/harness.ts';
import { logInto } from './support/logs.ts';

const SECRET = 'test-secret-0123456789abcdef';

interface Listed {
  id: string;
  dataset: string;
  format: string;
  service_date: string;
  state: string;
  rows: number;
  bytes: number;
  sha256: string;
  content_type: string;
  download: { url: string; expires_at: string } | null;
}

t.test('history exports API', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'exports-api-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const logged: string[] = [];
  const h = await startHarness({
    quiet: true,
    routes: ({ db }) =>
      exportRoutes({
        db,
        dir,
        secret: SECRET,
        ttlS: 600,
        log: logInto((message, line) => logged.push(`${message}: ${String(line.export)}`)),
      }),
  });
  t.teardown(() => h.close());
  await seedDay(h.db);
  const summary = await runExport(h.db, {
    dataset: ['reliability', 'realtime', 'alerts'],
    from: DAY,
    to: NEXT_DAY,
    dir,
    timezone: TZ,
    now: () => LATER,
  });
  const readyCount = summary.files.filter((f) => f.outcome === 'ready').length;
  t.equal(readyCount, 14, 'the export job wrote 14 files');
  const call = checker(t, h, await loadValidator(h));
  const max = bearer(await h.key('max'));

  t.test('plans: Free, Regular and Max test keys are refused; no key is 401', async (t) => {
    for (const [name, key] of [
      ['free', await h.key('free')],
      ['regular', await h.key('regular')],
      ['max test', await h.key('max', { test: true })],
    ] as const) {
      for (const path of ['/api/v1/history/exports', `/api/v1/history/exports/alerts-${DAY}.parquet`]) {
        const got = await call(path, bearer(key));
        t.equal(got.status, 403, `${name} ${path}`);
        t.equal(got.headers.get('content-type'), 'application/problem+json');
        t.equal(got.json.code, 'forbidden_plan');
      }
    }
    t.equal((await call('/api/v1/history/exports')).status, 401);
  });

  t.test('listing, filters and keyset pagination', async (t) => {
    const all = await call('/api/v1/history/exports?limit=100', max);
    t.equal(all.status, 200);
    const items = all.json.data as Listed[];
    t.equal(items.length, readyCount);
    t.ok(
      items.every((i) => i.state === 'ready' && i.download !== null),
      'ready files, each with a link',
    );
    const order = items.map((i) => `${i.service_date}|${i.id}`);
    t.same(
      order,
      [...order].sort((a, b) => (a.slice(0, 10) === b.slice(0, 10) ? (a < b ? -1 : 1) : a < b ? 1 : -1)),
      'newest day first, then by id',
    );

    const alerts = await call('/api/v1/history/exports?dataset=alerts&format=parquet', max);
    t.same((alerts.json.data as Listed[]).map((i) => i.id).sort(), [
      `alerts-${DAY}.parquet`,
      `alerts-${NEXT_DAY}.parquet`,
    ]);
    const oneDay = await call(`/api/v1/history/exports?from=${NEXT_DAY}&to=${NEXT_DAY}&limit=100`, max);
    t.ok(
      (oneDay.json.data as Listed[]).length > 0 &&
        (oneDay.json.data as Listed[]).every((i) => i.service_date === NEXT_DAY),
    );
    t.same((await call('/api/v1/history/exports?state=failed', max)).json.data, [], 'no failed files');

    for (const bad of [
      'dataset=trips',
      'format=csv',
      'from=2024-02-30',
      `from=${NEXT_DAY}&to=${DAY}`,
      'state=done',
      'limit=1001',
    ]) {
      const got = await call(`/api/v1/history/exports?${bad}`, max);
      t.equal(got.status, 400, bad);
      t.equal(got.headers.get('content-type'), 'application/problem+json', bad);
    }

    const seen: string[] = [];
    let next: string | null = '/api/v1/history/exports?limit=4';
    while (next) {
      const page = await call(next, max);
      t.equal(page.status, 200);
      seen.push(...(page.json.data as Listed[]).map((i) => i.id));
      next = page.json.links.next as string | null;
      t.ok(seen.length <= readyCount, 'pagination ends');
    }
    t.same(
      seen,
      items.map((i) => i.id),
      'pages of 4 give the same files in the same order, no duplicates',
    );

    // `format` is a filter here, not the event-stream switch: links.next and the cursor keep it
    let nextParquet: string | null = '/api/v1/history/exports?format=parquet&limit=2';
    const parquet: Listed[] = [];
    while (nextParquet) {
      const page = await call(nextParquet, max);
      parquet.push(...(page.json.data as Listed[]));
      nextParquet = page.json.links.next as string | null;
      if (nextParquet) t.match(nextParquet, /format=parquet/);
    }
    t.equal(parquet.length, readyCount / 2, 'every Parquet file, over several pages');
    t.ok(
      parquet.every((i) => i.format === 'parquet'),
      'and nothing else',
    );
    const parquetFirst = await call('/api/v1/history/exports?format=parquet&limit=2', max);
    const swapped = await call(
      `/api/v1/history/exports?format=ndjson.gz&limit=2&cursor=${parquetFirst.json.meta.next_cursor}`,
      max,
    );
    t.equal(swapped.json.code, 'invalid_cursor', 'a cursor is bound to its format filter');

    const first = await call('/api/v1/history/exports?limit=4', max);
    const replayed = await call(
      `/api/v1/history/exports?limit=4&dataset=alerts&cursor=${first.json.meta.next_cursor}`,
      max,
    );
    t.equal(replayed.status, 400);
    t.equal(replayed.json.code, 'invalid_cursor', 'a cursor is bound to its filters');

    const single = await call(`/api/v1/history/exports/${encodeURIComponent(items[0]!.id)}`, max);
    t.equal(single.json.sha256, items[0]!.sha256);
    t.equal((await call('/api/v1/history/exports/nope.parquet', max)).status, 404);
  });

  t.test('answers that carry signed links are kept by no cache', async (t) => {
    const list = await call('/api/v1/history/exports?limit=2', max);
    const id = (list.json.data as Listed[])[0]!.id;
    const one = await call(`/api/v1/history/exports/${encodeURIComponent(id)}`, max);
    for (const got of [list, one]) {
      t.equal(got.status, 200);
      t.equal(got.headers.get('cache-control'), 'no-store', 'not private, no-cache: a browser would keep the links');
      t.equal(got.headers.get('x-content-type-options'), 'nosniff');
    }
    t.equal(one.headers.get('etag'), null, 'and no ETag: nothing is kept to revalidate');
    const again = await call(`/api/v1/history/exports/${encodeURIComponent(id)}`, { ...max, 'if-none-match': '*' });
    t.equal(again.status, 200, 'never a 304');
    t.equal(again.headers.get('cache-control'), 'no-store');
  });

  t.test('downloads match the manifest, byte for byte', async (t) => {
    const items = (await call('/api/v1/history/exports?limit=100', max)).json.data as Listed[];
    for (const item of items) {
      const res = await fetch(`${h.url}${item.download!.url}`);
      t.equal(res.status, 200, item.id);
      const bytes = Buffer.from(await res.arrayBuffer());
      t.equal(res.headers.get('content-type'), item.content_type);
      t.equal(res.headers.get('content-encoding'), null, 'no content coding: the bytes are the file');
      t.equal(Number(res.headers.get('content-length')), item.bytes);
      t.equal(bytes.length, item.bytes, `${item.id}: byte count`);
      const sha = createHash('sha256').update(bytes).digest();
      t.equal(sha.toString('hex'), item.sha256, `${item.id}: sha256`);
      t.equal(res.headers.get('etag'), `"${item.sha256}"`);
      t.equal(res.headers.get('repr-digest'), `sha-256=:${sha.toString('base64')}:`);
      t.match(res.headers.get('content-disposition'), `attachment; filename="${item.id}"`);
      if (item.format === 'parquet') {
        const table = tableFromIPC(readParquet(new Uint8Array(bytes)).intoIPCStream());
        t.equal(table.numRows, item.rows, `${item.id}: parquet-wasm reads ${item.rows} rows`);
      } else {
        const lines = gunzipSync(bytes)
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0);
        t.equal(lines.length, item.rows, `${item.id}: ${item.rows} NDJSON lines`);
        for (const line of lines) JSON.parse(line);
      }
    }
  });

  t.test('ranges, revalidation and HEAD', async (t) => {
    const item = ((await call('/api/v1/history/exports?format=parquet&limit=1', max)).json.data as Listed[])[0]!;
    const url = `${h.url}${item.download!.url}`;
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    const part = await fetch(url, { headers: { range: 'bytes=4-99' } });
    t.equal(part.status, 206);
    t.equal(part.headers.get('content-range'), `bytes 4-99/${item.bytes}`);
    t.same(Buffer.from(await part.arrayBuffer()), whole.subarray(4, 100));
    const tail = await fetch(url, { headers: { range: 'bytes=-8' } });
    t.same(
      Buffer.from(await tail.arrayBuffer()),
      whole.subarray(whole.length - 8),
      'suffix range: the PAR1 footer end',
    );
    const stale = await fetch(url, { headers: { range: 'bytes=0-9', 'if-range': '"other"' } });
    t.equal(stale.status, 200, 'If-Range with another ETag gives the whole file');
    t.equal((await stale.arrayBuffer()).byteLength, item.bytes);
    const past = await fetch(url, { headers: { range: `bytes=${item.bytes}-` } });
    t.equal(past.status, 416);
    t.equal(past.headers.get('content-range'), `bytes */${item.bytes}`);
    t.equal(past.headers.get('content-type'), 'application/problem+json');
    const revalidated = await fetch(url, { headers: { 'if-none-match': `"${item.sha256}"` } });
    t.equal(revalidated.status, 304);
    const head = await fetch(url, { method: 'HEAD' });
    t.equal(head.status, 200);
    t.equal(Number(head.headers.get('content-length')), item.bytes);
    t.equal((await head.arrayBuffer()).byteLength, 0);
    t.equal((await fetch(url)).status, 200, 'the connection still serves after HEAD');
  });

  t.test('signed links refuse tampering and expiry', async (t) => {
    const item = ((await call('/api/v1/history/exports?limit=1', max)).json.data as Listed[])[0]!;
    const link = new URL(item.download!.url, h.url);
    const expires = link.searchParams.get('expires')!;
    const signature = link.searchParams.get('signature')!;
    const other = `alerts-${DAY}.ndjson.gz` === item.id ? `alerts-${DAY}.parquet` : `alerts-${DAY}.ndjson.gz`;
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    const cases: Array<[string, string, number, string]> = [
      ['altered signature', `${link.pathname}?expires=${expires}&signature=${flipped}`, 403, 'invalid_signature'],
      [
        'later expiry',
        `${link.pathname}?expires=${Number(expires) + 60}&signature=${signature}`,
        403,
        'invalid_signature',
      ],
      [
        'the expiry in ms',
        `${link.pathname}?expires=${Number(expires) * 1000}&signature=${signature}`,
        403,
        'invalid_signature',
      ],
      [
        'another file',
        `/api/v1/history/exports/${other}/download?expires=${expires}&signature=${signature}`,
        403,
        'invalid_signature',
      ],
      ['garbage signature', `${link.pathname}?expires=${expires}&signature=x`, 403, 'invalid_signature'],
      ['no signature', `${link.pathname}?expires=${expires}`, 400, 'invalid_parameter'],
    ];
    for (const [name, path, status, code] of cases) {
      const res = await fetch(`${h.url}${path}`);
      t.equal(res.status, status, name);
      t.equal(res.headers.get('content-type'), 'application/problem+json', name);
      t.equal(((await res.json()) as { code: string }).code, code, name);
    }
    t.ok(Date.parse(item.download!.expires_at) - h.clock.now >= 600_000, 'links live at least url_ttl_s');
    // issue 15: epoch seconds, as X-RateLimit-Reset and webhook-timestamp are
    t.match(expires, /^\d{10}$/, '`expires` is epoch seconds');
    t.equal(Number(expires) * 1000, Date.parse(item.download!.expires_at), 'the same instant as expires_at');
    const saved = h.clock.now;
    h.clock.now = Number(expires) * 1000;
    t.teardown(() => {
      h.clock.now = saved;
    });
    const expired = await fetch(link);
    t.equal(expired.status, 403);
    t.equal(((await expired.json()) as { code: string }).code, 'link_expired');
    h.clock.now = saved;
    t.equal((await fetch(link)).status, 200, 'the same link works before its expiry');
  });

  t.test('a large file streams whole, and an aborted download frees the connection', async (t) => {
    // 5 MiB of random bytes registered as a ready file: many chunks, backpressure on loopback
    const bytes = Buffer.alloc(5 * 1024 * 1024);
    randomFillSync(bytes);
    mkdirSync(join(dir, 'big'), { recursive: true });
    writeFileSync(join(dir, 'big', 'big.parquet'), bytes);
    const sha = createHash('sha256').update(bytes).digest('hex');
    await h.db.run(
      `INSERT INTO export_manifests (manifest_id, dataset, part, service_date, format, state, file_path,
        "rows", bytes, sha256, "schema", attempts, queued_at, created_at, updated_at)
      VALUES ('big.parquet', 'alerts', 'alert_versions', '2020-01-01', 'parquet', 'ready', 'big/big.parquet', 1,
        $bytes, $sha,
        [], 1, now(), now(), now())`,
      { bytes: BigInt(bytes.length), sha },
    );
    const got = await call('/api/v1/history/exports/big.parquet', max);
    const url = `${h.url}${got.json.download.url}`;
    const res = await fetch(url);
    const body = Buffer.from(await res.arrayBuffer());
    t.equal(body.length, bytes.length);
    t.equal(createHash('sha256').update(body).digest('hex'), sha, 'every byte arrived in order');

    const controller = new AbortController();
    const partial = await fetch(url, { signal: controller.signal });
    const reader = partial.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    for (let i = 0; i < 50 && h.server.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(h.server.inFlight, 0, 'the aborted download no longer counts as in flight');
    t.equal((await fetch(url, { headers: { range: 'bytes=0-0' } })).status, 206, 'the server still serves');

    unlinkSync(join(dir, 'big', 'big.parquet'));
    const gone = await fetch(url);
    t.equal(gone.status, 404, 'a ready manifest whose file vanished is not served');
    t.match(logged, [/listed ready but its file does not match: big\.parquet/], 'and the mismatch is logged');
  });
});
