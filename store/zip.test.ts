import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_COMPRESSION_RATIO, openZip, readZipBuffer, ZipError, type ZipArchive } from './zip.ts';
import { buildZip } from '../fixtures/zip-write.ts';
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

const text = `stop_id,stop_name\r\n${Array.from({ length: 2000 }, (_, i) => `S${i},"Stop, ${i}"`).join('\r\n')}`;

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
  await t.rejects(openZip(writeTemp(badOffset)), { name: 'ZipError', message: /is corrupt: unexpected end of file/ });

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
    /a\.txt does not extract|CRC-32|holds/,
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
    /too many bytes in the stream\. expected 10/,
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

  // a deflated entry: a stored one marked encrypted already fails on its sizes (12 header bytes)
  const deflated = buildZip([{ name: 'a.txt', data: 'x' }]);
  const encrypted = Buffer.from(deflated);
  encrypted.writeUInt16LE(0x801, deflated.length - 22 - 46 - 5 + 8);
  await t.rejects(
    withZip(writeTemp(encrypted), async (z) => z.read(z.entries[0]!)),
    /encrypted/,
  );

  // ZIP64 markers without the ZIP64 records they promise
  const zip64 = Buffer.from(zip);
  zip64.writeUInt32LE(0xffffffff, zip.length - 6);
  await t.rejects(openZip(writeTemp(zip64)), { name: 'ZipError' });

  const zip64Entry = Buffer.from(zip);
  zip64Entry.writeUInt32LE(0xffffffff, cdAt + 24);
  await t.rejects(
    withZip(writeTemp(zip64Entry), async (z) => z.read(z.entries[0]!)),
    { name: 'ZipError', message: /size mismatch/ },
  );

  const spanned = Buffer.from(zip);
  spanned.writeUInt16LE(1, zip.length - 22 + 4);
  await t.rejects(openZip(writeTemp(spanned)), { name: 'ZipError', message: /multi-disk/ });
});

t.test('an archive in memory reads with the same checks', async (t) => {
  const zip = buildZip([
    { name: 'gtfs/', data: '', method: 'store' },
    { name: 'gtfs/a.txt', data: text },
    { name: 'b.txt', data: 'b', method: 'store' },
  ]);
  t.same(
    (await readZipBuffer(zip)).map((e) => [e.name, e.data.toString()]),
    [
      ['gtfs/a.txt', text],
      ['b.txt', 'b'],
    ],
    'files only, in order',
  );

  await t.rejects(readZipBuffer(Buffer.from('not a zip at all, just some text that is long enough'), 'x.zip'), {
    name: 'ZipError',
    message: /^x\.zip is not a ZIP archive or is truncated/,
  });
  const damaged = Buffer.from(zip);
  // flip a bit inside the stored CRC of the last central directory entry
  damaged[zip.length - 22 - 46 - 5 + 16] = damaged[zip.length - 22 - 46 - 5 + 16]! ^ 0xff;
  await t.rejects(readZipBuffer(damaged), /CRC-32 mismatch in b\.txt/);
  const badLocal = Buffer.from(zip);
  badLocal.writeUInt32LE(0, 30 + 'gtfs/'.length); // after the directory's header and name
  await t.rejects(readZipBuffer(badLocal), { name: 'ZipError', message: /signature/ });
  await t.rejects(readZipBuffer(zip.subarray(0, 200)), /not a ZIP archive or is truncated/);
});

t.test('entries that would inflate to absurd sizes are refused before inflating', async (t) => {
  const zip = buildZip([{ name: 'stop_times.txt', data: 'x'.repeat(4096) }]);
  const cdAt = zip.length - 22 - 46 - 'stop_times.txt'.length;
  const compressed = zip.readUInt32LE(cdAt + 20);
  const bomb = Buffer.from(zip);
  bomb.writeUInt32LE(compressed * (MAX_COMPRESSION_RATIO + 1) + 1024 ** 2, cdAt + 24);
  await t.rejects(
    withZip(writeTemp(bomb), async (z) => z.extract(z.entries[0]!, join(dir, 'bomb'))),
    { name: 'ZipError', message: /would inflate .* which no schedule file does/ },
  );
});

t.test('names that climb out of the archive are refused', async (t) => {
  const zip = buildZip([{ name: '../../etc/passwd', data: 'x' }]);
  await t.rejects(openZip(writeTemp(zip)), { name: 'ZipError', message: /relative path/ });
});
