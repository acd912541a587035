import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openZip, readZipBuffer, ZipError, type ZipArchive } from './zip.ts';
import { buildZip } from './zip-write.ts';
import { FIXTURES_REAL, noRealFixtures } from '../test/support/fixtures-real.ts';

const dir = mkdtempSync(join(tmpdir(), 'zip-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const fixtures = FIXTURES_REAL;

let counter = 0;
function writeTemp(bytes: Buffer): string {
  const path = join(dir, `a${counter++}.zip`);
  writeFileSync(path, bytes);
  return path;
}

async function withZip<T>(path: string, fn: (zip: ZipArchive) => Promise<T>): Promise<T> {
  const zip = await openZip(path);
  try {
    return await fn(zip);
  } finally {
    await zip.close();
  }
}

const text = 'stop_id,stop_name\r\n' + Array.from({ length: 2000 }, (_, i) => `S${i},"Stop, ${i}"`).join('\r\n');

t.test('stored and deflated entries read and extract to the same bytes', async (t) => {
  const path = writeTemp(
    buildZip([
      { name: 'gtfs/', data: '', method: 'store' },
      { name: 'gtfs/stored.txt', data: text, method: 'store' },
      { name: 'gtfs/deflated.txt', data: text },
      { name: 'empty.txt', data: '' },
    ]),
  );
  await withZip(path, async (zip) => {
    t.same(
      zip.entries.map((e) => [e.name, e.method, e.isDirectory]),
      [
        ['gtfs/', 0, true],
        ['gtfs/stored.txt', 0, false],
        ['gtfs/deflated.txt', 8, false],
        ['empty.txt', 8, false],
      ],
    );
    const [, stored, deflated, empty] = zip.entries;
    t.ok(deflated!.compressedSize < deflated!.size, 'deflate actually compressed');
    t.equal((await zip.read(stored!)).toString(), text);
    t.equal((await zip.read(deflated!)).toString(), text);
    t.equal((await zip.read(empty!)).length, 0);
    for (const entry of [stored!, deflated!, empty!]) {
      const out = join(dir, `out-${counter++}`);
      await zip.extract(entry, out);
      t.equal(readFileSync(out, 'utf8'), entry === empty ? '' : text, `extract ${entry.name}`);
    }
    await t.rejects(zip.read(zip.entries[0]!), /is a directory/);
  });
});

t.test('junk appended after the archive is tolerated', async (t) => {
  const path = writeTemp(
    Buffer.concat([buildZip([{ name: 'a.txt', data: text }]), Buffer.from('<html>oops</html>\r\n')]),
  );
  await withZip(path, async (zip) => {
    t.equal((await zip.read(zip.entries[0]!)).toString(), text);
  });
});

t.test('a real agency zip lists and inflates', { skip: noRealFixtures() }, async (t) => {
  await withZip(join(fixtures, 'caltrain', 'ct.zip'), async (zip) => {
    t.equal(zip.entries.length, 18);
    const agency = zip.entries.find((e) => e.name === 'agency.txt')!;
    t.match((await zip.read(agency)).toString(), /^agency_id,agency_name/);
  });
});

t.test('corrupt archives are refused with a clear ZipError', async (t) => {
  const good = buildZip([{ name: 'a.txt', data: text }]);

  const random = Buffer.from(Array.from({ length: 288 }, (_, i) => (i * 131 + 7) % 256));
  await t.rejects(openZip(writeTemp(random)), { name: 'ZipError', message: /not a ZIP archive or is truncated/ });
  await t.rejects(openZip(writeTemp(Buffer.from('PK'))), /not a ZIP archive: only 2 bytes/);
  await t.rejects(openZip(writeTemp(good.subarray(0, good.length - 5))), /end of central directory record not found/);

  // central directory pointing past the end record
  const badOffset = Buffer.from(good);
  badOffset.writeUInt32LE(good.length, good.length - 6);
  await t.rejects(openZip(writeTemp(badOffset)), /central directory .* runs past/);

  // the body cut short: the directory survives but the data does not
  const truncated = Buffer.concat([good.subarray(0, 40), good.subarray(good.length - 22 - 46 - 5)]);
  const cdOffset = 40;
  truncated.writeUInt32LE(cdOffset, truncated.length - 6);
  await t.rejects(
    withZip(writeTemp(truncated), async (zip) => zip.read(zip.entries[0]!)),
    ZipError,
  );

  // one flipped byte in a stored entry: CRC mismatch, on read and on extract
  const stored = buildZip([{ name: 'a.txt', data: text, method: 'store' }]);
  stored[135] = stored[135]! ^ 0xff; // a byte of the stored data (header 30 + name 5)
  const flippedPath = writeTemp(stored);
  await t.rejects(
    withZip(flippedPath, async (zip) => zip.read(zip.entries[0]!)),
    /CRC-32 mismatch in a\.txt/,
  );
  await t.rejects(
    withZip(flippedPath, async (zip) => zip.extract(zip.entries[0]!, join(dir, 'x'))),
    /CRC-32 mismatch/,
  );

  // garbage in a deflate stream
  const deflated = buildZip([{ name: 'a.txt', data: text }]);
  deflated.fill(0xff, 35, 60);
  const garbagePath = writeTemp(deflated);
  await t.rejects(
    withZip(garbagePath, async (zip) => zip.read(zip.entries[0]!)),
    /a\.txt does not inflate|CRC-32|holds/,
  );
  await t.rejects(
    withZip(garbagePath, async (zip) => zip.extract(zip.entries[0]!, join(dir, 'y'))),
    ZipError,
  );

  // a declared size smaller than the real content
  const lying = buildZip([{ name: 'a.txt', data: text }]);
  const cdAt = lying.length - 22 - 46 - 5;
  lying.writeUInt32LE(10, cdAt + 24);
  const lyingPath = writeTemp(lying);
  await t.rejects(
    withZip(lyingPath, async (zip) => zip.read(zip.entries[0]!)),
    ZipError,
  );
  await t.rejects(
    withZip(lyingPath, async (zip) => zip.extract(zip.entries[0]!, join(dir, 'z'))),
    /inflates past its declared 10 bytes/,
  );
});

t.test('unsupported features are named', async (t) => {
  const zip = buildZip([{ name: 'a.txt', data: 'x', method: 'store' }]);
  const cdAt = zip.length - 22 - 46 - 5;

  const bzip = Buffer.from(zip);
  bzip.writeUInt16LE(12, cdAt + 10);
  await t.rejects(
    withZip(writeTemp(bzip), async (z) => z.read(z.entries[0]!)),
    /compression method 12/,
  );

  const encrypted = Buffer.from(zip);
  encrypted.writeUInt16LE(0x801, cdAt + 8);
  await t.rejects(
    withZip(writeTemp(encrypted), async (z) => z.read(z.entries[0]!)),
    /encrypted/,
  );

  const zip64 = Buffer.from(zip);
  zip64.writeUInt32LE(0xffffffff, zip.length - 6);
  await t.rejects(openZip(writeTemp(zip64)), /ZIP64 archive, which is not supported/);

  const zip64Entry = Buffer.from(zip);
  zip64Entry.writeUInt32LE(0xffffffff, cdAt + 24);
  await t.rejects(openZip(writeTemp(zip64Entry)), /ZIP64 archive \(entry a\.txt\)/);

  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  const withLocator = Buffer.concat([zip.subarray(0, zip.length - 22), locator, zip.subarray(zip.length - 22)]);
  await t.rejects(openZip(writeTemp(withLocator)), /ZIP64/);

  const spanned = Buffer.from(zip);
  spanned.writeUInt16LE(1, zip.length - 22 + 4);
  await t.rejects(openZip(writeTemp(spanned)), /multi-part/);
});

t.test('an archive in memory reads with the same checks', async (t) => {
  const zip = buildZip([
    { name: 'gtfs/', data: '', method: 'store' },
    { name: 'gtfs/a.txt', data: text },
    { name: 'b.txt', data: 'b', method: 'store' },
  ]);
  t.same(
    readZipBuffer(zip).map((e) => [e.name, e.data.toString()]),
    [
      ['gtfs/a.txt', text],
      ['b.txt', 'b'],
    ],
    'files only, in order',
  );

  t.throws(() => readZipBuffer(Buffer.from('not a zip at all, just some text that is long enough'), 'x.zip'), {
    name: 'ZipError',
    message: /^x\.zip is not a ZIP archive or is truncated/,
  });
  const damaged = Buffer.from(zip);
  // flip a bit inside the stored CRC of the last central directory entry
  damaged[zip.length - 22 - 46 - 5 + 16] = damaged[zip.length - 22 - 46 - 5 + 16]! ^ 0xff;
  t.throws(() => readZipBuffer(damaged), /CRC-32 mismatch in b\.txt/);
  const badLocal = Buffer.from(zip);
  badLocal.writeUInt32LE(0, 30 + 'gtfs/'.length); // after the directory's header and name
  t.throws(() => readZipBuffer(badLocal), /local header of gtfs\/a\.txt not found/);
  t.throws(() => readZipBuffer(zip.subarray(0, 200)), /not a ZIP archive or is truncated/);
});
